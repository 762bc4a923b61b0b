#include "accel/agentd/slurm_jobs.h"

#include <string>
#include <vector>

#include "accel/exec/client_process.h"

namespace accel::agentd {
namespace {

// Runs `argv`, this program in a child (libslurm, which may end its
// process, is asked there), and returns what it printed. `what` names the
// call in errors.
Result<std::string> runChild(std::vector<std::string> argv, const std::string& what,
                             std::chrono::milliseconds timeout) {
  exec::ClientCall call;
  call.argv = std::move(argv);
  call.inherit_environment = true;  // our own program: it needs SLURM_CONF
  call.timeout = timeout;
  call.max_output = 4096;
  auto r = exec::runClient(call);
  ACCEL_TRY(r);
  if (!r->succeeded()) return Error(ErrorCode::kUnavailable, what + ": " + r->describe());
  return r->out;
}

}  // namespace

Result<JobPresence> jobPresenceIsolated(const std::string& agentd_path, uint32_t job_id,
                                        std::chrono::milliseconds timeout) {
  auto out = runChild({agentd_path, "--job-presence", std::to_string(job_id)},
                      "presence of job " + std::to_string(job_id), timeout);
  ACCEL_TRY(out);
  if (*out == "alive\n") return JobPresence::kAlive;
  if (*out == "gone\n") return JobPresence::kGone;
  if (*out == "unknown\n") return JobPresence::kUnknown;
  return Error(ErrorCode::kParse, "presence of job " + std::to_string(job_id) + ": bad answer");
}

Status drainNodeIsolated(const std::string& agentd_path, const std::string& node,
                         const std::string& reason, std::chrono::milliseconds timeout) {
  auto out = runChild({agentd_path, "--drain-node", node, reason}, "drain " + node, timeout);
  ACCEL_TRY(out);
  return okStatus();
}

Status signalJobIsolated(const std::string& agentd_path, uint32_t job_id, int sig, bool steps_only,
                         std::chrono::milliseconds timeout) {
  auto out = runChild({agentd_path, "--signal-job", std::to_string(job_id), std::to_string(sig),
                       steps_only ? "steps" : "full"},
                      "signal job " + std::to_string(job_id), timeout);
  ACCEL_TRY(out);
  return okStatus();
}

Result<bool> tellJobIsolated(const std::string& agentd_path, uint32_t job_id,
                             const std::string& line, bool to_sruns,
                             std::chrono::milliseconds timeout) {
  auto out = runChild(
      {agentd_path, "--tell-job", std::to_string(job_id), line, to_sruns ? "sruns" : "file"},
      "tell job " + std::to_string(job_id), timeout);
  ACCEL_TRY(out);
  if (*out == "written\n" || *out == "notified\n") return true;
  if (*out == "no file\n") return false;
  return Error(ErrorCode::kParse, "tell job " + std::to_string(job_id) + ": bad answer");
}

}  // namespace accel::agentd
