#include "accel/agentd/job_output.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace accel::agentd {
namespace {

Error sysError(const std::string& what, int err) {
  return Error(ErrorCode::kIo, what + ": " + std::strerror(err));
}

}  // namespace

Status becomeJobUser(uint32_t uid, uint32_t gid) {
  if (uid == 0) return Error(ErrorCode::kPermissionDenied, "a root job is not written for");
  const gid_t groups[] = {static_cast<gid_t>(gid)};
  if (geteuid() == 0 && setgroups(1, groups) != 0) return sysError("setgroups", errno);
  if (setgid(static_cast<gid_t>(gid)) != 0) return sysError("setgid", errno);
  if (setuid(static_cast<uid_t>(uid)) != 0) return sysError("setuid", errno);
  // A process that could become root again has not dropped anything.
  if (geteuid() != uid || getuid() != uid || (uid != 0 && setuid(0) == 0))
    return Error(ErrorCode::kPermissionDenied, "could not drop to uid " + std::to_string(uid));
  return okStatus();
}

Status appendLineToFile(const std::string& path, const std::string& line) {
  if (path.empty() || path.front() != '/')
    return Error(ErrorCode::kInvalidArgument, "not an absolute path: " + path);
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Error(ErrorCode::kNotFound, path + ": no such file");
    if (err == ELOOP) return Error(ErrorCode::kInvalidArgument, path + ": a symbolic link");
    if (err == ENXIO) return Error(ErrorCode::kInvalidArgument, path + ": not a regular file");
    return sysError(path, err);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Error(ErrorCode::kInvalidArgument, path + ": not a regular file");
  }
  const std::string text = line + "\n";
  const ssize_t n = write(fd, text.data(), text.size());
  const int err = errno;
  close(fd);
  if (n < 0) return sysError(path, err);
  if (static_cast<size_t>(n) != text.size()) return Error(ErrorCode::kIo, path + ": short write");
  return okStatus();
}

}  // namespace accel::agentd
