#pragma once
// Surrogate steps (seed 000): each appliance job of a Slurm job gets a job
// step of that job, named after it, that lives while the appliance job runs
// and ends COMPLETED or FAILED with it. The agent starts
//   srun --jobid=J --overlap -J NAME --ntasks=1 accelctl wait-appliance J ID
// as the job's user (Slurm refuses root a step in another user's job); the
// waiter asks the daemon until the appliance job is over and exits 0 if it
// succeeded, 1 otherwise. The agent waits for srun: when srun ends while the
// appliance job still runs, Slurm ended the step (scancel, the job's end or
// time limit), and the owner of the step is told, to cancel the appliance job.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "accel/agent/job_record.h"
#include "accel/appliance/appliance.h"

namespace accel::agentd {

struct SurrogateSpec {
  uint32_t job_id = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;
  std::string appliance_job;  // a valid appliance job id
  std::string step_name;
};

struct SurrogateOptions {
  std::string srun = "srun";     // a path, or a name looked up in PATH
  std::string accelctl;          // absolute path of the waiter
  std::string config_path;       // accel.conf, passed to the waiter
  std::string slurm_conf;        // SLURM_CONF for srun; empty: srun's default
};

// Whether this node makes a surrogate step for `job`, an appliance job of
// the Slurm job `rec` holds: the first time it is seen running (or already
// over, when it ran between two polls), for a job that is ready here, and
// only on the job's leader (job_nodes.h): every node of a job sees the same
// appliance jobs, and each gets one step. Never for an entry the agent could
// not read (ApplianceJob::unreadable); at most kMaxSurrogateStepsPerJob a job
// (JobManager::claimSurrogate). Whether it already has one is the
// job manager's to say (claimSurrogate).
bool wantsSurrogate(const agent::JobRecord& rec, const appliance::ApplianceJob& job);

// The command line srun gets (pure, for tests).
std::vector<std::string> surrogateArgv(const SurrogateOptions& options, const SurrogateSpec& spec);

class SurrogateSteps {
 public:
  // Called on a helper thread when srun ended; `wait_status` as waitpid
  // gives it, -1 when srun could not be started. Never called after the
  // object is destroyed.
  using OnEnd = std::function<void(const SurrogateSpec& spec, int wait_status)>;

  SurrogateSteps(SurrogateOptions options, OnEnd on_end);
  ~SurrogateSteps();  // later ends are no longer reported; steps keep running

  // Starts srun as the job's user and returns at once. Errors are reported
  // through OnEnd (-1), so the caller has one path for every end.
  void launch(const SurrogateSpec& spec);

  // After a restart: the srun a previous daemon started for `spec` is no
  // child of this one. It is found by its command line (surrogateArgv's,
  // whatever the step's name) and its end is reported through OnEnd, wait
  // status -1 (unknown). When there is none, the step ended while no daemon
  // watched, and OnEnd comes at once if `gone_means_ended`; otherwise (the
  // caller cannot tell it from an srun Slurm refused) nothing is reported.
  void adopt(const SurrogateSpec& spec, bool gone_means_ended);

 private:
  struct Shared;
  SurrogateOptions options_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace accel::agentd
