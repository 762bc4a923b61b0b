#pragma once
// The job's own directory: <root>/<job_id>, owned by the job's user, mode
// 0700, made without following links. Its path is a function of the job id
// alone (never of user input), so an epilog can remove it even when the
// daemon lost the record. Tasks find it as ACCEL_JOB_DIR.
#include <string>

#include "accel/agent/job_step.h"

namespace accel::agent {

class JobDirStep : public JobStep {
 public:
  // `root` must exist and be writable by the daemon only (e.g. 0755 root).
  explicit JobDirStep(std::string root) : root_(std::move(root)) {}
  std::string_view name() const override { return "job directory"; }
  Status setUp(JobRecord& job) override;
  Status tearDown(const JobRecord& job) override;
  std::string pathFor(uint32_t job_id) const { return root_ + "/" + std::to_string(job_id); }

 private:
  std::string root_;
};

}  // namespace accel::agent
