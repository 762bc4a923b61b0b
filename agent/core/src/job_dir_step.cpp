#include "accel/agent/job_dir_step.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "accel/common/safe_file.h"

namespace accel::agent {

namespace {

// Unmounts whatever is mounted at `path` (lazily: a process of the job that
// still holds a file keeps that file, not the mount point). A path that is
// no mount point, or none at all, is success. The path is the agent's own
// (<root>/<job id> in a root-owned root), so no link is followed to reach it.
Status unmountAll(const std::string& path) {
  for (int i = 0; i < 16; ++i) {
    if (::umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0) continue;
    // Not a mount point, or no such path (also a component that is no
    // directory: a broken IpuofDir fails the set-up, never the clean-up).
    if (errno == EINVAL || errno == ENOENT || errno == ENOTDIR) return okStatus();
    return sysError("unmount " + path, errno);
  }
  return Error(ErrorCode::kConflict, path + ": still a mount point after 16 unmounts");
}

}  // namespace

JobDirStep::JobDirStep(std::string root, std::string ipu_root, TreeDisposer dispose,
                       JobDirSpace space)
    : root_(std::move(root)),
      ipu_root_(std::move(ipu_root)),
      dispose_(std::move(dispose)),
      space_(space) {
  if (!dispose_) dispose_ = [](const std::string& path) { return removeTree(path); };
}

std::vector<std::string> JobDirStep::pathsOf(uint32_t job_id) const {
  std::vector<std::string> out{root_ + "/" + std::to_string(job_id)};
  if (!ipu_root_.empty()) out.push_back(ipu_root_ + "/" + std::to_string(job_id));
  return out;
}

std::string JobDirStep::pathFor(const JobRequestSpec& spec) const {
  const std::string& root = spec.ipus > 0 && !ipu_root_.empty() ? ipu_root_ : root_;
  return root + "/" + std::to_string(spec.job_id);
}

Status JobDirStep::setUp(JobRecord& job) {
  const std::string dir = pathFor(job.spec);
  // A leftover from an earlier attempt may hold another owner's files: start clean.
  ACCEL_TRY(unmountAll(dir));
  ACCEL_TRY(dispose_(dir));
  // Root's until JobDirHandOver: the owner gets it once everything is in it.
  ACCEL_TRY(makeDirectory(dir, 0700));
  if (space_.size > 0) {
    const std::string opts = "size=" + std::to_string(space_.size) +
                             ",nr_inodes=" + std::to_string(space_.inodes) + ",mode=0700";
    if (::mount("accel-job", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0)
      return sysError("mount a tmpfs of its own (JobDirSize) on " + dir, errno);
  }
  job.job_dir = dir;
  job.env.emplace_back("ACCEL_JOB_DIR", dir);
  return okStatus();
}

Status JobDirStep::release(const JobRecord& job) {
  Status first;
  for (const auto& dir : pathsOf(job.spec.job_id)) {
    Status s = unmountAll(dir);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status JobDirStep::tearDown(const JobRecord& job) {
  // Always computed paths: a record edited on disk cannot steer removal
  // elsewhere. Both roots are tried: an epilog of a job the daemon never
  // saw does not know whether it asked for IPUs.
  for (const auto& dir : pathsOf(job.spec.job_id)) {
    ACCEL_TRY(unmountAll(dir));
    ACCEL_TRY(dispose_(dir));
  }
  return okStatus();
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
