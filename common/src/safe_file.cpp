#include "accel/common/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <string>

#include "accel/common/space_reserve.h"

namespace accel {
namespace {

// Closes a descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

std::string dirName(const std::string& path) {
  auto pos = path.rfind('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return path.substr(0, pos);
}

std::string baseName(const std::string& path) {
  auto pos = path.rfind('/');
  return pos == std::string::npos ? path : path.substr(pos + 1);
}

Status writeAll(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return sysError("write " + what, errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return okStatus();
}

std::string tempSuffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char kHex[] = "0123456789abcdef";
  std::string s = ".tmp.";
  uint64_t v = rng();
  for (int i = 0; i < 12; ++i) {
    s += kHex[v & 0xf];
    v >>= 4;
  }
  return s;
}

Status applyOwnerMode(int fd, mode_t mode, FileOwner owner, const std::string& what) {
  if (owner.uid != static_cast<uid_t>(-1) || owner.gid != static_cast<gid_t>(-1)) {
    if (::fchown(fd, owner.uid, owner.gid) != 0) return sysError("chown " + what, errno);
  }
  // fchmod after fchown: chown clears set-id bits, and umask must not narrow mode.
  if (::fchmod(fd, mode) != 0) return sysError("chmod " + what, errno);
  return okStatus();
}

}  // namespace

bool isSafePathComponent(std::string_view name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (c == '/' || u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

// For a write that failed for lack of space: which file system is full, and
// what it has left, so the journal says where to look.
static Error withSpaceNote(Error e, int err, int dirfd, const std::string& dir,
                           bool* out_of_space = nullptr) {
  if (err != ENOSPC && err != EDQUOT) return e;
  if (out_of_space) *out_of_space = true;
  struct statvfs v {};
  std::string note = "; the file system holding " + dir + " is full";
  if (::fstatvfs(dirfd, &v) == 0)
    note += " (" + std::to_string(uint64_t{v.f_bavail} * v.f_frsize / 1024) + " KiB and " +
            std::to_string(uint64_t{v.f_favail}) + " inodes free)";
  return Error(e.code(), e.message() + note);
}

static Status writeOnce(const std::string& path, std::string_view content, mode_t mode,
                        FileOwner owner, Durability durability, bool* out_of_space);

Status writeFileAtomic(const std::string& path, std::string_view content, mode_t mode,
                       FileOwner owner, Durability durability) {
  bool out_of_space = false;
  Status s = writeOnce(path, content, mode, owner, durability, &out_of_space);
  // Out of space where a reserve is held (space_reserve.h): it is given up
  // for this write, which is tried once more.
  if (out_of_space && space::release(dirName(path)))
    s = writeOnce(path, content, mode, owner, durability, &out_of_space);
  return s;
}

static Status writeOnce(const std::string& path, std::string_view content, mode_t mode,
                        FileOwner owner, Durability durability, bool* out_of_space) {
  const bool sync = durability == Durability::kPowerLoss;
  const std::string dir = dirName(path);
  const std::string base = baseName(path);
  if (!isSafePathComponent(base))
    return Error(ErrorCode::kInvalidArgument, "unsafe file name: " + path);
  Fd dirfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dirfd.get() < 0) return sysError("open directory " + dir, errno);
  const std::string tmp = base + tempSuffix();
  Fd fd(::openat(dirfd.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 mode & 0600));
  if (fd.get() < 0) {
    const int err = errno;
    return withSpaceNote(sysError("create " + dir + "/" + tmp, err), err, dirfd.get(), dir,
                         out_of_space);
  }
  Status s = applyOwnerMode(fd.get(), mode, owner, path);
  if (s.ok()) {
    s = writeAll(fd.get(), content, path);
    if (!s.ok()) s = withSpaceNote(s.error(), errno, dirfd.get(), dir, out_of_space);
  }
  if (s.ok() && sync && ::fsync(fd.get()) != 0) {
    const int err = errno;
    s = withSpaceNote(sysError("fsync " + path, err), err, dirfd.get(), dir, out_of_space);
  }
  if (s.ok() && ::renameat(dirfd.get(), tmp.c_str(), dirfd.get(), base.c_str()) != 0)
    s = sysError("rename into " + path, errno);
  if (!s.ok()) {
    ::unlinkat(dirfd.get(), tmp.c_str(), 0);
    return s;
  }
  if (sync && ::fsync(dirfd.get()) != 0) return sysError("fsync directory " + dir, errno);
  return okStatus();
}

Result<std::string> readFileNoFollow(const std::string& path, size_t max_bytes) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ELOOP) return Error(ErrorCode::kPermissionDenied, path + ": is a symbolic link");
    return sysError(path, errno);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return sysError("stat " + path, errno);
  if (!S_ISREG(st.st_mode))
    return Error(ErrorCode::kInvalidArgument, path + ": not a regular file");
  if (static_cast<size_t>(st.st_size) > max_bytes)
    return Error(ErrorCode::kInvalidArgument,
                 path + ": larger than " + std::to_string(max_bytes) + " bytes");
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd.get(), out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sysError("read " + path, errno);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

Status makeDirectory(const std::string& path, mode_t mode, FileOwner owner) {
  const std::string dir = dirName(path);
  const std::string base = baseName(path);
  if (!isSafePathComponent(base))
    return Error(ErrorCode::kInvalidArgument, "unsafe directory name: " + path);
  Fd parent(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (parent.get() < 0) return sysError("open directory " + dir, errno);
  // Created 0700 first; the final mode is applied after the owner is set.
  if (::mkdirat(parent.get(), base.c_str(), 0700) != 0 && errno != EEXIST)
    return sysError("mkdir " + path, errno);
  Fd fd(::openat(parent.get(), base.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ELOOP || errno == ENOTDIR)
      return Error(ErrorCode::kConflict, path + ": exists and is not a directory");
    return sysError("open " + path, errno);
  }
  return applyOwnerMode(fd.get(), mode, owner, path);
}

}  // namespace accel
