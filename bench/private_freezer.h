#pragma once
// Real cgroup v1 freezers in Slurm's proctrack/cgroup layout for the limit
// benchmarks, as each node of scripts/slurm-sandbox has them: a directory of
// the benchmark's own below the freezer hierarchy's root
// (/sys/fs/cgroup/freezer/accel-bench-<pid>), which a private mount namespace
// shows at /sys/fs/cgroup/freezer in place of the root. accel-agentd started
// from the benchmark shares that namespace, so it finds a job's cgroup from a
// task's /proc/PID/cgroup (the full path from the hierarchy's root) through
// the mount table, as on a node. The benchmark itself reaches its cgroups
// through a descriptor of the real root, taken before the root was unmounted.
// Everything made is removed by the destructor, processes in it ended first.
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace accel::bench {

inline constexpr const char* kFreezer = "/sys/fs/cgroup/freezer";
inline constexpr long kCgroupMagic = 0x27e0eb;  // CGROUP_SUPER_MAGIC: a cgroup v1 hierarchy

// The pids listed in a cgroup.procs (any cgroup.procs-like text).
inline std::vector<pid_t> pidsOf(const std::string& text) {
  std::vector<pid_t> out;
  std::istringstream in(text);
  for (long pid = 0; in >> pid;)
    if (pid > 0 && pid <= INT_MAX) out.push_back(static_cast<pid_t>(pid));
  return out;
}

// This program's directory below the freezer hierarchy's root, reached
// through a descriptor of the root taken before the root was unmounted in
// this mount namespace. Removed with everything in it by the destructor.
class PrivateFreezer {
 public:
  ~PrivateFreezer() { removeAll(); }

  // Makes the directory and, in a new private mount namespace, mounts it at
  // /sys/fs/cgroup/freezer in place of the root. Call while single-threaded.
  bool setUp(std::string* error) {
    top_ = "accel-bench-" + std::to_string(getpid());
    root_fd_ = ::open(kFreezer, O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct statfs fs {};
    if (root_fd_ < 0 || fstatfs(root_fd_, &fs) != 0 || fs.f_type != kCgroupMagic)
      return fail(error, std::string("no cgroup v1 hierarchy at ") + kFreezer);
    if (mkdirat(root_fd_, top_.c_str(), 0755) != 0) return fail(error, "mkdir " + top_);
    made_ = true;
    if (unshare(CLONE_NEWNS) != 0) return fail(error, "unshare(CLONE_NEWNS)");
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      return fail(error, "making / private");
    char stage[] = "/tmp/accel-bench-stage-XXXXXX";
    if (mkdtemp(stage) == nullptr) return fail(error, "mkdtemp");
    const std::string src = std::string(kFreezer) + "/" + top_;
    bool moved = mount(src.c_str(), stage, nullptr, MS_BIND, nullptr) == 0 &&
                 umount2(kFreezer, MNT_DETACH) == 0 &&
                 mount(stage, kFreezer, nullptr, MS_MOVE, nullptr) == 0;
    int saved = errno;
    ::rmdir(stage);
    errno = saved;
    if (!moved) return fail(error, "mounting " + src + " at " + kFreezer);
    return true;
  }

  int rootFd() const { return root_fd_; }
  // A path below the root, for the *at calls.
  std::string below(const std::string& rel) const { return top_ + "/" + rel; }

  bool makeDirs(const std::string& rel) {
    std::string path = top_;
    std::istringstream parts(rel);
    for (std::string part; std::getline(parts, part, '/');) {
      path += "/" + part;
      if (mkdirat(root_fd_, path.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
    return true;
  }

  std::string read(const std::string& rel) const {
    int fd = openat(root_fd_, below(rel).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    std::string out;
    char buf[8192];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    ::close(fd);
    return out;
  }

  bool write(const std::string& rel, const std::string& text) const {
    int fd = openat(root_fd_, below(rel).c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
  }

  // Thaws `rel` and everything below it, kills what is in them, waits for
  // them to go (reaping what is this program's) and removes the cgroups,
  // children first. True when `rel` is gone.
  bool remove(const std::string& rel) {
    for (int round = 0; round < 100; ++round) {
      std::vector<std::string> dirs;
      walk(below(rel), dirs);
      if (dirs.empty()) return true;
      bool busy = false;
      for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
        int fd = openat(root_fd_, (*it + "/freezer.state").c_str(), O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
          (void)!::write(fd, "THAWED", 6);
          ::close(fd);
        }
        fd = openat(root_fd_, (*it + "/cgroup.procs").c_str(), O_RDONLY | O_CLOEXEC);
        std::string text;
        char buf[8192];
        for (ssize_t n; fd >= 0 && (n = ::read(fd, buf, sizeof buf)) > 0;)
          text.append(buf, static_cast<size_t>(n));
        if (fd >= 0) ::close(fd);
        for (pid_t pid : pidsOf(text)) {
          ::kill(pid, SIGKILL);
          busy = true;
        }
        if (unlinkat(root_fd_, it->c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) busy = true;
      }
      if (!busy) return true;
      while (waitpid(-1, nullptr, WNOHANG) > 0) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  // Everything, the directory itself included; only after the daemon is gone
  // (it may reap any child of this program).
  bool removeAll() {
    if (!made_) return true;
    bool gone = remove("");
    if (gone) made_ = false;
    if (root_fd_ >= 0) ::close(root_fd_);
    root_fd_ = -1;
    return gone;
  }

 private:
  bool fail(std::string* error, const std::string& what) {
    *error = what + ": " + std::strerror(errno);
    return false;
  }

  // `rel` (a path from the root) and every directory below it, parents first.
  void walk(const std::string& rel, std::vector<std::string>& out) const {
    std::string path = rel;
    while (!path.empty() && path.back() == '/') path.pop_back();
    int fd = openat(root_fd_, path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    out.push_back(path);
    DIR* d = fdopendir(fd);
    if (d == nullptr) {
      ::close(fd);
      return;
    }
    std::vector<std::string> subs;
    while (dirent* e = readdir(d))
      if (e->d_type == DT_DIR && e->d_name[0] != '.') subs.push_back(path + "/" + e->d_name);
    closedir(d);
    for (const auto& s : subs) walk(s, out);
  }

  std::string top_;
  int root_fd_ = -1;
  bool made_ = false;
};

}  // namespace accel::bench
