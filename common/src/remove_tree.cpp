// removeTree, moveAside and checkRootOnlyDirectory (declared in safe_file.h):
// removing trees that users built, and checking the directories they live in.
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <unordered_set>
#include <vector>

#include "accel/common/clock.h"
#include "accel/common/safe_file.h"

namespace accel {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// Subdirectories one listing collects before they are entered; the rest of
// the directory is read again afterwards. Bounds memory per level.
constexpr size_t kMaxListedDirs = 1024;
constexpr size_t kReadBufferBytes = size_t{32} * 1024;
constexpr uint64_t kStopCheckEvery = 1024;
// Put among a level's failed names when the directory cannot be read: no
// entry is called that, and its rmdir failing is then no surprise.
constexpr const char* kUnreadable = "/";

std::string parentOf(const std::string& path) {
  auto pos = path.rfind('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return path.substr(0, pos);
}

std::string baseOf(const std::string& path) {
  auto pos = path.rfind('/');
  return pos == std::string::npos ? path : path.substr(pos + 1);
}

std::string stripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// One directory on the way down.
struct Level {
  std::string name;  // its name in the level above (the top: the base of the path)
  dev_t dev = 0;
  ino_t ino = 0;
  int fd = -1;                             // -1 once closed to stay within the descriptor bound
  bool listed = false;                     // the last listing reached the end of the directory
  std::vector<std::string> subdirs;        // listed, not yet entered
  std::unordered_set<std::string> failed;  // could not be removed: not tried again
};

Level levelOf(const std::string& name, const struct stat& st, int fd) {
  Level level;
  level.name = name;
  level.dev = st.st_dev;
  level.ino = st.st_ino;
  level.fd = fd;
  return level;
}

// The walk of one removeTree call. The levels from the top down to the
// current directory are a stack on the heap; only the deepest few hold a
// descriptor (open levels are always a suffix of the stack).
class TreeRemover {
 public:
  TreeRemover(int parent_fd, std::string shown, const RemoveTreeOptions& options,
              RemoveTreeStats& stats)
      : parent_fd_(parent_fd),
        shown_(std::move(shown)),
        options_(options),
        stats_(stats),
        window_(std::max(options.max_open_dirs, 2) - 1),
        buffer_(kReadBufferBytes) {}
  ~TreeRemover() {
    for (auto& level : stack_)
      if (level.fd >= 0) ::close(level.fd);
  }
  TreeRemover(const TreeRemover&) = delete;
  TreeRemover& operator=(const TreeRemover&) = delete;

  Status run(const std::string& base);

 private:
  Status walk();
  void list(Level& cur);
  void removeEntry(Level& cur, const std::string& name);
  void enter(size_t at, const std::string& name);
  Status leave();
  Status reopenParent(Level& cur, Level& up);
  void push(Level level);
  void pop();
  void closeAncestors();
  void retry(Level& cur, const std::string& name);
  bool stopping();
  void note(Level* where, const std::string& name, const Error& error);
  std::string pathOf(const std::string& name) const;
  Status outcome() const;

  int parent_fd_;
  std::string shown_;
  const RemoveTreeOptions& options_;
  RemoveTreeStats& stats_;
  size_t window_;  // levels kept open; one more may be open while reopening a parent
  std::vector<char> buffer_;
  std::vector<Level> stack_;
  size_t open_ = 0;
  dev_t dev_ = 0;
  int rescans_ = 0;
  uint64_t ops_ = 0;
  bool stopped_ = false;  // options_.stop said so: it stays said
  uint64_t failures_ = 0;
  Status first_error_;
};

Status TreeRemover::run(const std::string& base) {
  struct stat st {};
  if (::fstatat(parent_fd_, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return okStatus();
    return sysError("stat " + shown_, errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(parent_fd_, base.c_str(), 0) == 0 || errno == ENOENT) {
      ++stats_.removed;
      return okStatus();
    }
    if (errno != EISDIR) return sysError("unlink " + shown_, errno);
  }
  int fd = ::openat(parent_fd_, base.c_str(), kDirFlags);
  if (fd < 0) {
    if (errno == ENOENT) return okStatus();
    if ((errno == ENOTDIR || errno == ELOOP) && ::unlinkat(parent_fd_, base.c_str(), 0) == 0) {
      ++stats_.removed;  // it became something else than a directory meanwhile
      return okStatus();
    }
    return sysError("open " + shown_, errno);
  }
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return sysError("stat " + shown_, err);
  }
  dev_ = st.st_dev;
  push(levelOf(base, st, fd));
  ACCEL_TRY(walk());
  return outcome();
}

Status TreeRemover::walk() {
  while (!stack_.empty()) {
    if (stopping())
      return Error(ErrorCode::kTimeout, shown_ + ": stopped after " +
                                            std::to_string(stats_.removed) +
                                            " entries; the rest is left for a later pass");
    Level& cur = stack_.back();
    if (!cur.subdirs.empty()) {
      std::string name = std::move(cur.subdirs.back());
      cur.subdirs.pop_back();
      enter(stack_.size() - 1, name);
    } else if (!cur.listed) {
      list(cur);
    } else {
      ACCEL_TRY(leave());
    }
  }
  return okStatus();
}

// Reads the directory from its start: everything but subdirectories is
// removed on the way; subdirectories are collected (up to kMaxListedDirs,
// after which the listing stops and is made again once they are gone).
void TreeRemover::list(Level& cur) {
  cur.listed = true;
  if (::lseek(cur.fd, 0, SEEK_SET) < 0) {
    note(nullptr, "", sysError("rewind " + pathOf(""), errno));
    cur.failed.insert(kUnreadable);
    return;
  }
  for (;;) {
    ssize_t n = ::getdents64(cur.fd, buffer_.data(), buffer_.size());
    if (n < 0 && errno == EINTR) continue;
    // ENOENT: someone else removed the directory while it was open; a
    // removed directory is empty, and removing its name will find it gone.
    if (n < 0 && errno == ENOENT) return;
    if (n < 0) {
      note(nullptr, "", sysError("read directory " + pathOf(""), errno));
      cur.failed.insert(kUnreadable);
      return;
    }
    if (n == 0) return;
    for (ssize_t off = 0; off < n;) {
      auto* ent = reinterpret_cast<struct dirent64*>(buffer_.data() + off);
      off += ent->d_reclen;
      std::string name = ent->d_name;
      if (name == "." || name == ".." || cur.failed.count(name) != 0) continue;
      if (ent->d_type == DT_DIR)
        cur.subdirs.push_back(std::move(name));
      else
        removeEntry(cur, name);
    }
    if (cur.subdirs.size() >= kMaxListedDirs || stopping()) {
      cur.listed = false;
      return;
    }
  }
}

// Anything but a directory is unlinked; a directory (EISDIR: it was one all
// along, or became one) is collected for entering.
void TreeRemover::removeEntry(Level& cur, const std::string& name) {
  ++ops_;
  if (::unlinkat(cur.fd, name.c_str(), 0) == 0) {
    ++stats_.removed;
    return;
  }
  if (errno == ENOENT) return;
  if (errno == EISDIR) {
    cur.subdirs.push_back(name);
    return;
  }
  note(&cur, name, sysError("unlink " + pathOf(name), errno));
}

// Enters subdirectory `name` of level `at`: opened without following a link,
// on the tree's own file system only.
void TreeRemover::enter(size_t at, const std::string& name) {
  ++ops_;
  int fd = ::openat(stack_[at].fd, name.c_str(), kDirFlags);
  if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
    closeAncestors();
    fd = ::openat(stack_[at].fd, name.c_str(), kDirFlags);
  }
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return;
    if (err == ENOTDIR || err == ELOOP) {  // no longer a directory: a file or a link now
      if (::unlinkat(stack_[at].fd, name.c_str(), 0) == 0)
        ++stats_.removed;
      else if (errno == EISDIR)
        retry(stack_[at], name);  // and a directory again
      else if (errno != ENOENT)
        note(&stack_[at], name, sysError("unlink " + pathOf(name), errno));
      return;
    }
    note(&stack_[at], name, sysError("open " + pathOf(name), err));
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_dev != dev_) {
    Error e = st.st_dev != dev_ && st.st_dev != 0
                  ? Error(ErrorCode::kConflict,
                          pathOf(name) + ": another file system is mounted there; left as it is")
                  : sysError("stat " + pathOf(name), errno);
    ::close(fd);
    note(&stack_[at], name, e);
    return;
  }
  push(levelOf(name, st, fd));
}

// The current directory is listed and its subdirectories are done: remove
// it from its parent, reopening the parent through ".." if it was closed.
Status TreeRemover::leave() {
  ++ops_;  // climbing out of a deep chain is work too: it must not hide from `stop`
  Level& cur = stack_.back();
  int parent_fd = parent_fd_;
  Level* up = nullptr;
  if (stack_.size() > 1) {
    up = &stack_[stack_.size() - 2];
    if (up->fd < 0) ACCEL_TRY(reopenParent(cur, *up));
    parent_fd = up->fd;
  }
  const std::string name = cur.name;
  const int rc = ::unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR);
  const int err = rc == 0 ? 0 : errno;
  if (rc == 0 || err == ENOENT) {  // ENOENT: someone else removed it
    if (rc == 0) ++stats_.removed;
    pop();
    return okStatus();
  }
  if ((err == ENOTEMPTY || err == EEXIST) && cur.failed.empty()) {
    // Someone added entries after the listing: list it again, a bounded number of times.
    if (rescans_ < options_.max_rescans) {
      ++rescans_;
      cur.listed = false;
      return okStatus();
    }
    pop();
    note(up, name,
         Error(ErrorCode::kConflict,
               pathOf(name) + ": entries kept appearing while it was removed"));
    return okStatus();
  }
  if (err == ENOTDIR) {  // replaced by a file under the same name; ours moved elsewhere in the tree
    pop();
    if (::unlinkat(parent_fd, name.c_str(), 0) == 0) ++stats_.removed;
    if (up != nullptr && rescans_ < options_.max_rescans) {
      ++rescans_;
      up->listed = false;  // look for ours again
    }
    return okStatus();
  }
  const bool already_noted = (err == ENOTEMPTY || err == EEXIST) && !cur.failed.empty();
  pop();
  if (already_noted) {
    if (up != nullptr) up->failed.insert(name);
  } else {
    note(up, name, sysError("rmdir " + pathOf(name), err));
  }
  return okStatus();
}

// The parent of `cur` is reached through "..", which must be the directory
// met on the way down: if a directory of the tree was moved meanwhile, ".."
// may now be anywhere, and nothing is removed there.
Status TreeRemover::reopenParent(Level& cur, Level& up) {
  int fd = ::openat(cur.fd, "..", kDirFlags);
  if (fd < 0) return sysError("open the parent of " + pathOf(""), errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_dev != up.dev || st.st_ino != up.ino) {
    ::close(fd);
    return Error(ErrorCode::kConflict, shown_ +
                                           ": a directory in it was moved while it was removed; " +
                                           "the rest is left for a later pass");
  }
  up.fd = fd;
  ++open_;
  stats_.max_open_dirs = std::max(stats_.max_open_dirs, static_cast<int>(open_));
  return okStatus();
}

void TreeRemover::push(Level level) {
  stack_.push_back(std::move(level));
  ++open_;
  stats_.max_depth = std::max<uint64_t>(stats_.max_depth, stack_.size());
  stats_.max_open_dirs = std::max(stats_.max_open_dirs, static_cast<int>(open_));
  if (open_ > window_) {
    Level& oldest = stack_[stack_.size() - open_];
    ::close(oldest.fd);
    oldest.fd = -1;
    --open_;
  }
}

void TreeRemover::pop() {
  if (stack_.back().fd >= 0) {
    ::close(stack_.back().fd);
    --open_;
  }
  stack_.pop_back();
}

// Out of descriptors (a low RLIMIT_NOFILE, or the process's other threads):
// keep only the current directory open.
void TreeRemover::closeAncestors() {
  while (open_ > 1) {
    Level& oldest = stack_[stack_.size() - open_];
    ::close(oldest.fd);
    oldest.fd = -1;
    --open_;
  }
}

// `name` changed kind under the walk (file, directory, file): try it once
// more later, within the budget of rescans.
void TreeRemover::retry(Level& cur, const std::string& name) {
  if (rescans_ < options_.max_rescans) {
    ++rescans_;
    cur.subdirs.push_back(name);
    return;
  }
  note(&cur, name,
       Error(ErrorCode::kConflict, pathOf(name) + ": kept changing while it was removed"));
}

bool TreeRemover::stopping() {
  if (stopped_) return true;
  if (!options_.stop || ops_ < kStopCheckEvery) return false;
  ops_ = 0;
  stopped_ = options_.stop();
  return stopped_;
}

void TreeRemover::note(Level* where, const std::string& name, const Error& error) {
  if (failures_++ == 0) first_error_ = error;
  if (where != nullptr && !name.empty()) where->failed.insert(name);
}

// The path of `name` in the current directory, for messages; shortened in
// the middle when the tree is deep.
std::string TreeRemover::pathOf(const std::string& name) const {
  std::string p = shown_;
  for (size_t i = 1; i < stack_.size(); ++i) p += "/" + stack_[i].name;
  if (!name.empty()) p += "/" + name;
  constexpr size_t kKeep = 160;
  if (p.size() > 2 * kKeep + 5) p = p.substr(0, kKeep) + "/.../" + p.substr(p.size() - kKeep);
  return p;
}

Status TreeRemover::outcome() const {
  if (failures_ == 0) return okStatus();
  const Error& first = first_error_.error();
  if (failures_ == 1) return first;
  return Error(first.code(),
               first.message() + " (and " + std::to_string(failures_ - 1) + " more entries left)");
}

// The fault of one directory on the way to a checked one, or empty.
std::string directoryFault(const struct stat& st, bool is_target) {
  const uid_t me = ::geteuid();
  if (st.st_uid != 0 && st.st_uid != me)
    return "owned by uid " + std::to_string(st.st_uid) + ", not root";
  const bool sticky = (st.st_mode & S_ISVTX) != 0;
  if ((st.st_mode & 022) != 0 && (is_target || !sticky)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string("writable by ") + ((st.st_mode & 002) != 0 ? "others" : "its group") +
           " (mode " + mode + ")";
  }
  return "";
}

}  // namespace

Status removeTree(const std::string& path, const RemoveTreeOptions& options,
                  RemoveTreeStats* stats) {
  const std::string clean = stripTrailingSlashes(path);
  const std::string dir = parentOf(clean);
  const std::string base = baseOf(clean);
  if (!isSafePathComponent(base)) return Error(ErrorCode::kInvalidArgument, "unsafe path: " + path);
  int parent = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) {
    // Nothing can be below a parent that is missing or is not a directory:
    // there is nothing to remove (an epilog after a prolog that failed on
    // exactly that has nothing to clean, and must not fail for it).
    if (errno == ENOENT || errno == ENOTDIR) return okStatus();
    return sysError("open directory " + dir, errno);
  }
  RemoveTreeStats local;
  Status s = TreeRemover(parent, clean, options, stats != nullptr ? *stats : local).run(base);
  ::close(parent);
  return s;
}

Result<std::string> moveAside(const std::string& path, const std::string& trash_dir) {
  static std::atomic<uint64_t> counter{0};
  const std::string clean = stripTrailingSlashes(path);
  const std::string dir = parentOf(clean);
  const std::string base = baseOf(clean);
  if (!isSafePathComponent(base)) return Error(ErrorCode::kInvalidArgument, "unsafe path: " + path);
  int from = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (from < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::string();
    return sysError("open directory " + dir, errno);
  }
  int to = ::open(trash_dir.c_str(), kDirFlags);
  if (to < 0) {
    int err = errno;
    ::close(from);
    return sysError("open directory " + trash_dir, err);
  }
  std::string name;
  int rc = -1;
  for (int attempt = 0; attempt < 8 && rc != 0; ++attempt) {
    name = base + "." + std::to_string(wallNs()) + "." + std::to_string(::getpid()) + "." +
           std::to_string(counter.fetch_add(1));
    rc = ::renameat2(from, base.c_str(), to, name.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && errno != EEXIST) break;
  }
  int err = errno;
  ::close(from);
  ::close(to);
  if (rc != 0) {
    if (err == ENOENT) return std::string();
    return sysError("move " + clean + " into " + trash_dir, err);
  }
  return trash_dir + "/" + name;
}

Status checkRootOnlyDirectory(const std::string& path) {
  const std::string clean = stripTrailingSlashes(path);
  if (clean.empty() || clean.front() != '/')
    return Error(ErrorCode::kInvalidArgument, "'" + path + "' is not an absolute path");
  struct stat st {};
  if (::lstat(clean.c_str(), &st) != 0) return sysError(clean, errno);
  if (S_ISLNK(st.st_mode))
    return Error(ErrorCode::kPermissionDenied,
                 clean + ": is a symbolic link; name the directory itself");
  if (!S_ISDIR(st.st_mode)) return Error(ErrorCode::kPermissionDenied, clean + ": not a directory");
  if (std::string fault = directoryFault(st, true); !fault.empty())
    return Error(ErrorCode::kPermissionDenied, clean + ": " + fault);
  // The directories above it, as the kernel resolves them.
  char resolved[PATH_MAX];
  if (::realpath(parentOf(clean).c_str(), resolved) == nullptr)
    return sysError(parentOf(clean), errno);
  for (std::string up = resolved;; up = parentOf(up)) {
    if (::stat(up.c_str(), &st) != 0) return sysError(up, errno);
    if (std::string fault = directoryFault(st, false); !fault.empty())
      return Error(ErrorCode::kPermissionDenied,
                   clean + ": the directory above it, " + up + ", is " + fault);
    if (up == "/") break;
  }
  return okStatus();
}

}  // namespace accel
