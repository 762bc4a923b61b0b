#pragma once
// Writes the job's task environment into its directory as accel.env
// (`export NAME='value'` lines, owned by the job's user, mode 0600), for
// launchers that do not go through the SPANK plugin (containers, ssh into
// the allocation): `. "$ACCEL_JOB_DIR/accel.env"`. It runs last, so it sees
// what every earlier step added. The file goes with the directory.
#include "accel/agent/job_step.h"

namespace accel::agent {

class EnvFileStep : public JobStep {
 public:
  static constexpr const char* kFileName = "accel.env";
  std::string_view name() const override { return "environment file"; }
  Status setUp(JobRecord& job) override;
  Status tearDown(const JobRecord&) override { return okStatus(); }
};

// The file's text: one `export NAME='value'` line per variable, with single
// quotes in values escaped for a POSIX shell.
std::string renderEnvFile(const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace accel::agent
