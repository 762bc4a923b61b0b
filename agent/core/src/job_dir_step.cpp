#include "accel/agent/job_dir_step.h"

#include "accel/common/safe_file.h"

namespace accel::agent {

Status JobDirStep::setUp(JobRecord& job) {
  const std::string dir = pathFor(job.spec.job_id);
  // A leftover from an earlier attempt may hold another owner's files: start clean.
  ACCEL_TRY(removeTree(dir));
  ACCEL_TRY(makeDirectory(dir, 0700, FileOwner{job.spec.uid, job.spec.gid}));
  job.job_dir = dir;
  job.env.emplace_back("ACCEL_JOB_DIR", dir);
  return okStatus();
}

Status JobDirStep::tearDown(const JobRecord& job) {
  // Always the computed path: a record edited on disk cannot steer removal elsewhere.
  return removeTree(pathFor(job.spec.job_id));
}

}  // namespace accel::agent
