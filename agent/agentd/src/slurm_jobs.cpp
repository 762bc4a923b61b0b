#include "accel/agentd/slurm_jobs.h"

#include <string>

#include "accel/exec/client_process.h"

namespace accel::agentd {
namespace {

// Runs `agentd_path FLAG JOB` (a libslurm question asked in a child, which
// libslurm may end) and returns what it printed. `what` names the question
// in errors.
Result<std::string> askChild(const std::string& agentd_path, const char* flag, uint32_t job_id,
                             const std::string& what, std::chrono::milliseconds timeout) {
  exec::ClientCall call;
  call.argv = {agentd_path, flag, std::to_string(job_id)};
  call.inherit_environment = true;  // our own program: it needs SLURM_CONF
  call.timeout = timeout;
  call.max_output = 4096;
  auto r = exec::runClient(call);
  ACCEL_TRY(r);
  if (!r->succeeded())
    return Error(ErrorCode::kUnavailable,
                 what + " of job " + std::to_string(job_id) + ": " + r->describe());
  return r->out;
}

}  // namespace

Result<JobPresence> jobPresenceIsolated(const std::string& agentd_path, uint32_t job_id,
                                        std::chrono::milliseconds timeout) {
  auto out = askChild(agentd_path, "--job-presence", job_id, "presence", timeout);
  ACCEL_TRY(out);
  if (*out == "alive\n") return JobPresence::kAlive;
  if (*out == "gone\n") return JobPresence::kGone;
  if (*out == "unknown\n") return JobPresence::kUnknown;
  return Error(ErrorCode::kParse, "presence of job " + std::to_string(job_id) + ": bad answer");
}

Status drainNodeIsolated(const std::string& agentd_path, const std::string& node,
                         const std::string& reason, std::chrono::milliseconds timeout) {
  exec::ClientCall call;
  call.argv = {agentd_path, "--drain-node", node, reason};
  call.inherit_environment = true;
  call.timeout = timeout;
  call.max_output = 4096;
  auto r = exec::runClient(call);
  ACCEL_TRY(r);
  if (!r->succeeded())
    return Error(ErrorCode::kUnavailable, "drain " + node + ": " + r->describe());
  return okStatus();
}

Status signalJobIsolated(const std::string& agentd_path, uint32_t job_id, int sig, bool steps_only,
                         std::chrono::milliseconds timeout) {
  exec::ClientCall call;
  call.argv = {agentd_path, "--signal-job", std::to_string(job_id), std::to_string(sig),
               steps_only ? "steps" : "full"};
  call.inherit_environment = true;
  call.timeout = timeout;
  call.max_output = 4096;
  auto r = exec::runClient(call);
  ACCEL_TRY(r);
  if (!r->succeeded())
    return Error(ErrorCode::kUnavailable,
                 "signal job " + std::to_string(job_id) + ": " + r->describe());
  return okStatus();
}

}  // namespace accel::agentd
