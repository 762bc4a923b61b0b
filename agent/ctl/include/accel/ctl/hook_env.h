#pragma once
// What accelctl prolog/epilog read from slurmd's environment, and the
// request they send. Pure functions of the environment (CliIo::getenv), so
// tests give a literal one.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "accel/common/result.h"
#include "accel/ctl/cli.h"
#include "accel/ipc/control_requests.h"
#include "accel/spank/submit_check.h"

namespace accel::ctl {

// The longest node list sent; the daemon refuses a longer one. The same
// bound as agent::kMaxNodeListBytes (ctl_test checks they agree).
inline constexpr size_t kMaxNodeListBytes = size_t{60} * 1024;
// The longest refusal sent; the daemon refuses a longer one. The same bound
// as agent::kMaxRefusalBytes.
inline constexpr size_t kMaxRefusalBytes = 1024;

// The prolog request's JobSpecFields, filled in place and sent as they
// stand (prologRequest encodes them without a copy), plus what only the hook
// uses. From slurmd's variables (readHookEnv): job_id, uid, gid, user, node,
// partition, gpus; node_list is SLURM_NODELIST (SLURM_JOB_NODELIST where
// newer Slurm sets that instead) and node_count SLURM_JOB_NUM_NODES, empty
// and 0 when unknown (the node then leads the job, as every job was led
// before jobs spanned nodes); restart_count is SLURM_JOB_RESTART_COUNT, the
// job's earlier runs (it was requeued), 0 on its first run or when unknown.
// From the job's options (readJobOptions): the counts, the appliance limit
// and signal, or `refusal`: why the options (SPANK_ACCEL_*) are refused,
// empty when they are not. A refused job asks for nothing (the counts stay
// 0), and the daemon fails it as a user's mistake: the hook exits 0.
struct HookEnv : ipc::JobSpecFields {
  bool limit_from_default = false;  // the site's ApplianceTimeDefault, not the user's option
  // Values that were not usable and were left unknown, one line each, for
  // the hook's stderr. They are slurmd's, never the job's fault: the hook
  // goes on.
  std::vector<std::string> notes;

  // A job that asked for nothing of ours runs even when the agent is down; a
  // limit the site applied by default is not the job asking.
  bool asksForAccelerators() const {
    return ipus > 0 || !gpus.empty() || (appliance_time_sec >= 0 && !limit_from_default);
  }
};

// slurmd's own variables. `full`: everything the prolog sends; otherwise only
// what the epilog needs (job id, uid). kInvalidArgument names a missing or
// malformed variable (slurmd's fault, never the job's).
Result<HookEnv> readHookEnv(const CliIo& io, bool full);

// The job's options: the SPANK_ACCEL_* variables, which the job's user
// controls (a job submitted through libslurm need not have passed the
// plugin), read by the plugin's own rules against the node's `limits`
// (spank::readJobEnv). Sets the counts and the appliance limit, or, for
// anything the plugin would have refused, only `refusal`. Never fails.
void readJobOptions(const CliIo& io, const spank::SiteLimits& limits, HookEnv& e);

std::vector<uint8_t> prologRequest(const HookEnv& env);
std::vector<uint8_t> epilogRequest(const HookEnv& env);

}  // namespace accel::ctl
