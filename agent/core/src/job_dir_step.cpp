#include "accel/agent/job_dir_step.h"

#include "accel/common/safe_file.h"

namespace accel::agent {

JobDirStep::JobDirStep(std::string root, std::string ipu_root, TreeDisposer dispose)
    : root_(std::move(root)), ipu_root_(std::move(ipu_root)), dispose_(std::move(dispose)) {
  if (!dispose_) dispose_ = [](const std::string& path) { return removeTree(path); };
}

std::string JobDirStep::pathFor(const JobRequestSpec& spec) const {
  const std::string& root = spec.ipus > 0 && !ipu_root_.empty() ? ipu_root_ : root_;
  return root + "/" + std::to_string(spec.job_id);
}

Status JobDirStep::setUp(JobRecord& job) {
  const std::string dir = pathFor(job.spec);
  // A leftover from an earlier attempt may hold another owner's files: start clean.
  ACCEL_TRY(dispose_(dir));
  ACCEL_TRY(makeDirectory(dir, 0700, FileOwner{job.spec.uid, job.spec.gid}));
  job.job_dir = dir;
  job.env.emplace_back("ACCEL_JOB_DIR", dir);
  return okStatus();
}

Status JobDirStep::tearDown(const JobRecord& job) {
  // Always computed paths: a record edited on disk cannot steer removal
  // elsewhere. Both roots are tried: an epilog of a job the daemon never
  // saw does not know whether it asked for IPUs.
  ACCEL_TRY(dispose_(root_ + "/" + std::to_string(job.spec.job_id)));
  if (ipu_root_.empty()) return okStatus();
  return dispose_(ipu_root_ + "/" + std::to_string(job.spec.job_id));
}

}  // namespace accel::agent
