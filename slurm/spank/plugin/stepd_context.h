#pragma once
// slurmstepd (remote context): the step is reported to accel-agentd, the
// tasks receive the job's environment, each task is registered, and a job
// that cannot run here fails with the reason.
//
// Nothing here returns an error before the tasks exist: a failing callback
// at that stage makes slurmd report a launch failure, and for a batch job
// slurmctld then drains the node ("batch job complete failure"). A refusal is
// instead recorded and delivered by taskInit in each forked task, where it
// fails the job, prints to the job's own output, and leaves the node alone.
#include "slurm_spank.h"

namespace accel::spank::stepd {

int init(spank_t sp, int argc, char** argv);
int initPostOpt(spank_t sp);
int userInit(spank_t sp);
int taskInit(spank_t sp);
int taskPostFork(spank_t sp);
int taskExit(spank_t sp);
int exit(spank_t sp);

}  // namespace accel::spank::stepd
