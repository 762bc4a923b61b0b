#include "accel/agent/env_file_step.h"

#include "accel/common/safe_file.h"

namespace accel::agent {

std::string renderEnvFile(const std::vector<std::pair<std::string, std::string>>& env) {
  std::string out = "# The environment accel-agent gives this job's tasks.\n";
  for (const auto& [name, value] : env) {
    out += "export " + name + "='";
    for (char c : value) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += "'\n";
  }
  return out;
}

Status EnvFileStep::setUp(JobRecord& job) {
  if (job.job_dir.empty()) return Error(ErrorCode::kInternal, "no job directory to write into");
  return writeFileAtomic(job.job_dir + "/" + kFileName, renderEnvFile(job.env), 0600,
                         FileOwner{job.spec.uid, job.spec.gid}, Durability::kProcessCrash);
}

}  // namespace accel::agent
