#pragma once
// sbatch, salloc (allocator context) and srun (local context): the options
// are registered, checked before anything is queued, and handed to the Prolog.
#include "slurm_spank.h"

namespace accel::spank::submit {

int init(spank_t sp, int argc, char** argv);
int initPostOpt(spank_t sp);

}  // namespace accel::spank::submit
