#include "accel/common/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace accel {
namespace {

// Closes the descriptor on every return path.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() { ::close(fd_); }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

std::string quoted(std::string_view path) { return "'" + std::string(path) + "'"; }

Status checkFileKind(const std::string& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode)) {
    return Error(ErrorCode::kInvalidArgument,
                 "config file " + quoted(path) + " is a directory, not a file");
  }
  if (!S_ISREG(st.st_mode)) {
    return Error(ErrorCode::kInvalidArgument,
                 "config file " + quoted(path) + " is not a regular file");
  }
  if (static_cast<std::size_t>(st.st_size) > kMaxConfigFileBytes) {
    return Error(ErrorCode::kInvalidArgument,
                 "config file " + quoted(path) + " is " + std::to_string(st.st_size) +
                     " bytes long; the limit is " + std::to_string(kMaxConfigFileBytes));
  }
  return okStatus();
}

}  // namespace

Result<std::string> readConfigFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not hang; it is refused just below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return sysError("cannot open config file " + quoted(path), errno);
  FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return sysError("cannot stat config file " + quoted(path), errno);
  ACCEL_TRY(checkFileKind(path, st));

  std::string content;
  char buf[8192];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return sysError("cannot read config file " + quoted(path), errno);
    if (n == 0) break;
    content.append(buf, static_cast<std::size_t>(n));
    // The file may grow between fstat and read.
    if (content.size() > kMaxConfigFileBytes) {
      return Error(ErrorCode::kInvalidArgument, "config file " + quoted(path) + " is too large");
    }
  }
  return content;
}

Result<std::string> defaultConfigPath(const char* slurm_conf_env, std::string_view file_name) {
  if (file_name.empty() || file_name.find('/') != std::string_view::npos) {
    return Error(ErrorCode::kInvalidArgument,
                 "config file name " + quoted(file_name) + " must be a plain file name");
  }
  bool from_env = slurm_conf_env != nullptr && slurm_conf_env[0] != '\0';
  std::string_view slurm_conf = from_env ? std::string_view(slurm_conf_env) : kDefaultSlurmConf;
  if (slurm_conf.front() != '/') {
    return Error(ErrorCode::kInvalidArgument,
                 "SLURM_CONF=" + quoted(slurm_conf) + " is not an absolute path");
  }
  if (slurm_conf.back() == '/') {
    return Error(ErrorCode::kInvalidArgument,
                 "SLURM_CONF=" + quoted(slurm_conf) + " names a directory, not slurm.conf");
  }
  return configPathBeside(slurm_conf, file_name);
}

std::string configPathBeside(std::string_view path, std::string_view file_name) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return std::string(file_name);
  return std::string(path.substr(0, slash + 1)) + std::string(file_name);
}

}  // namespace accel
