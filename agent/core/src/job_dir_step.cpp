#include "accel/agent/job_dir_step.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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
  // Root's until JobDirHandOver: the owner gets it once everything is in it.
  ACCEL_TRY(makeDirectory(dir, 0700));
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

Status JobDirHandOver::setUp(JobRecord& job) {
  if (job.job_dir.empty()) return Error(ErrorCode::kInternal, "no job directory to hand over");
  const int fd = ::open(job.job_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return sysError("open " + job.job_dir, errno);
  Status s;
  if (::fchown(fd, job.spec.uid, job.spec.gid) != 0 || ::fchmod(fd, 0700) != 0)
    s = sysError("give " + job.job_dir + " to uid " + std::to_string(job.spec.uid), errno);
  ::close(fd);
  return s;
}

}  // namespace accel::agent
