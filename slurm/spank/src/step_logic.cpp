#include "accel/spank/step_logic.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>

namespace accel::spank {
namespace {

std::string jobTag(std::uint32_t job_id) { return "job " + std::to_string(job_id) + ": "; }

StepDecision trouble(std::uint32_t job_id, const std::string& asked, const std::string& what) {
  StepDecision d;
  if (asked.empty()) {
    d.note = jobTag(job_id) + what + " (the job asked for nothing of accel-agent; it runs)";
  } else {
    d.refusal =
        jobTag(job_id) + what + "; the job asked for " + asked + " and cannot run without it";
  }
  return d;
}

}  // namespace

std::string describeAsk(const RawOptions& raw, const std::string& job_gpus) {
  auto show = [](const char* name, const std::optional<std::string>& v) {
    return "--" + std::string(name) + "=" + *v;
  };
  if (raw.ipus) return show("ipus", raw.ipus);
  if (raw.num_replicas) return show("num-replicas", raw.num_replicas);
  if (raw.appliance_time) return show("appliance-time", raw.appliance_time);
  if (raw.job_time_sec) return show("job-time-sec", raw.job_time_sec);
  if (raw.appliance_signal) return show("appliance-signal", raw.appliance_signal);
  if (!job_gpus.empty()) return "GPUs (SLURM_JOB_GPUS=" + job_gpus + ")";
  return "";
}

bool isValidEnvName(const std::string& name) {
  return !name.empty() && name.find('=') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

StepDecision decideStep(std::uint32_t job_id, const std::string& asked,
                        const Result<DaemonReply>& reply) {
  if (!reply.ok())
    return trouble(job_id, asked, "accel-agentd cannot be reached: " + reply.error().message());
  const DaemonReply& r = *reply;
  if (r.outcome == Outcome::kNotFound) return {};
  if (r.outcome != Outcome::kOk || !r.job) {
    std::string what = "accel-agentd answered " + std::string(outcomeName(r.outcome));
    if (!r.message.empty()) what += ": " + r.message;
    return trouble(job_id, asked, what);
  }
  StepDecision d;
  if (r.job->failed) {
    d.refusal = jobTag(job_id) + (r.job->last_error.empty() ? "this node could not prepare the job"
                                                            : r.job->last_error);
    return d;
  }
  for (const auto& [name, value] : r.job->env) {
    if (isValidEnvName(name))
      d.env.emplace_back(name, value);
    else
      d.note = jobTag(job_id) + "accel-agentd sent an invalid variable name; ignored";
  }
  for (const auto& line : r.job->warnings) {
    if (d.warnings.size() == kMaxStepWarnings) break;
    std::string shown = line.substr(0, kMaxStepWarningBytes);
    for (char& c : shown)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    d.warnings.push_back(std::move(shown));
  }
  return d;
}

int foldExitCode(int so_far, int wait_status) {
  int code = 0;
  if (WIFEXITED(wait_status))
    code = WEXITSTATUS(wait_status);
  else if (WIFSIGNALED(wait_status))
    code = 128 + WTERMSIG(wait_status);
  return std::max(so_far, code);
}

std::string ipuofConfigForTask(const std::vector<std::pair<std::string, std::string>>& env,
                               std::uint32_t local_task_id) {
  std::string dir;
  std::uint32_t gcds = 0;
  for (const auto& [k, v] : env) {
    if (k == "ACCEL_IPUOF_DIR") dir = v;
    if (k == "ACCEL_IPUOF_GCDS") {
      char* end = nullptr;
      unsigned long n = std::strtoul(v.c_str(), &end, 10);
      gcds = (end != v.c_str() && *end == '\0' && n <= 65536) ? static_cast<std::uint32_t>(n) : 0;
    }
  }
  if (dir.empty() || gcds <= 1) return "";
  return dir + "/ipuof-gcd" + std::to_string(local_task_id % gcds) + ".conf";
}

}  // namespace accel::spank
