#pragma once
// What the plugin decides inside slurmstepd, as pure functions: whether a
// step's tasks may run, which variables they receive, and the step's exit
// code. The SPANK glue performs the calls and applies the decisions.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accel/common/result.h"
#include "accel/spank/daemon_messages.h"
#include "accel/spank/submit_check.h"

namespace accel::spank {

// What the job asked of accel-agent, in the user's words, for messages:
// "--ipus=4", "--appliance-time=30", "GPUs (SLURM_JOB_GPUS=0,1)". Empty when
// it asked for nothing: then the agent being down must not affect it.
std::string describeAsk(const RawOptions& raw, const std::string& job_gpus);

struct StepDecision {
  std::vector<std::pair<std::string, std::string>> env;  // for every task of the step
  // Set when the tasks must not run: one line for the user, without "accel: ".
  std::optional<std::string> refusal;
  // Set when something went wrong that must not reach the user (the job
  // asked for nothing): for the node's log only.
  std::optional<std::string> note;
  // Lines for the job's output (without "accel: "): at most
  // kMaxStepWarnings, each printable and at most kMaxStepWarningBytes.
  std::vector<std::string> warnings;
};

inline constexpr std::size_t kMaxStepWarnings = 4;
inline constexpr std::size_t kMaxStepWarningBytes = 512;

// Applies the answer to JobRequest (or the failure to get one):
//  - unreachable or a failed call: refuse when the job asked, else only a note;
//  - NotFound (the agent does not know the job): nothing, silently;
//  - Ok with state Failed: refuse with the daemon's reason;
//  - Ok otherwise: the variables of JobInfo.env;
//  - any other outcome: as unreachable.
// The IPUoF file of one task: an IPU partition has one GCD per task on the
// node, and task N (local id) uses GCD N (modulo the GCD count, should a
// step start more tasks than the job asked for). Empty when the job's
// environment names no IPUoF directory or a single GCD (IPUOF_CONFIG_PATH
// from the daemon is right for every task then).
std::string ipuofConfigForTask(const std::vector<std::pair<std::string, std::string>>& env,
                               std::uint32_t local_task_id);

StepDecision decideStep(std::uint32_t job_id, const std::string& asked,
                        const Result<DaemonReply>& reply);

// True for a name a variable may have: non-empty, no '=' and no NUL.
bool isValidEnvName(const std::string& name);

// The step's exit code so far, given one more task's wait status: the
// largest exit code, a task killed by a signal counting as 128 + signal (the
// shell's convention).
int foldExitCode(int so_far, int wait_status);

}  // namespace accel::spank
