#pragma once
// The job's own directory: <root>/<job_id>, mode 0700, made without
// following links. It is root's while the prolog writes into it (the IPUoF
// files, accel.env), so nothing the job's owner does from another job can
// stand in the way of those writes; JobDirHandOver, the prolog's last step,
// gives it to the job's user in one fchown. IPU jobs (--ipus) get it under the
// IPU root (IpuofDir of vipu.conf, where their IPUoF files belong) when
// there is one. Its path is a function of the job id alone (never of user
// input), so an epilog can remove it even when the daemon lost the record.
// Tasks find it as ACCEL_JOB_DIR.
//
// With a JobDirSpace of some size the directory is a tmpfs of its own, of that
// size and inode count, mounted by setUp (nosuid, nodev): a job that fills it
// fills nothing of the node's. The epilog's first act (release) unmounts it,
// lazily, so its space is back before the epilog writes anything.
//
// The directory and everything in it is the user's, so getting rid of it is
// left to a `TreeDisposer`: the daemon's moves it aside into a trash
// directory (one rename, however big or deep the tree) and removes it in
// the background; the default removes it on the spot (removeTree).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "accel/agent/job_step.h"

namespace accel::agent {

// Gets rid of the tree at `path` (a missing path is success); an error
// leaves it where it was.
using TreeDisposer = std::function<Status(const std::string& path)>;

// The prolog's last step: the job directory (root's until now) becomes the
// job's user's, through a descriptor opened without following links. Nothing
// to undo: the directory goes with JobDirStep's tearDown.
class JobDirHandOver : public JobStep {
 public:
  std::string_view name() const override { return "job directory hand-over"; }
  Status setUp(JobRecord& job) override;
  Status tearDown(const JobRecord&) override { return okStatus(); }
};

// Each job directory's own file system; size 0: none, the directory is made
// on its root's file system.
struct JobDirSpace {
  uint64_t size = 0;  // bytes
  uint64_t inodes = 0;
};

class JobDirStep : public JobStep {
 public:
  // `root` must exist and be writable by the daemon only (e.g. 0755 root).
  explicit JobDirStep(std::string root, std::string ipu_root = "", TreeDisposer dispose = {},
                      JobDirSpace space = {});
  std::string_view name() const override { return "job directory"; }
  Status setUp(JobRecord& job) override;
  Status tearDown(const JobRecord& job) override;
  Status release(const JobRecord& job) override;
  std::string pathFor(const JobRequestSpec& spec) const;

 private:
  // Every directory the job's may be at: both roots, from the job id alone.
  std::vector<std::string> pathsOf(uint32_t job_id) const;

  std::string root_;
  std::string ipu_root_;
  TreeDisposer dispose_;
  JobDirSpace space_;
};

}  // namespace accel::agent
