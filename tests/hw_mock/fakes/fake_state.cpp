#include "fake_state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "accel/common/safe_file.h"

namespace accel::hw_mock {

namespace fs = std::filesystem;

std::string stateRoot() {
  const char* env = std::getenv("ACCEL_HW_MOCK_STATE");
  if (env != nullptr && *env != '\0') return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "state";  // no /proc: relative to the working directory
  return (exe.parent_path().parent_path() / "state").string();
}

Status ensureDirectory(const std::string& path, unsigned mode) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return Error(ErrorCode::kIo, "create " + path + ": " + ec.message());
  if (::mkdir(path.c_str(), 0700) == 0) {
    // chmod, not mkdir's mode: the umask must not narrow it (1777 for jobs/).
    if (::chmod(path.c_str(), mode) != 0) return sysError("chmod " + path, errno);
    return okStatus();
  }
  if (errno != EEXIST) return sysError("mkdir " + path, errno);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Error(ErrorCode::kConflict, path + ": exists and is not a directory");
  return okStatus();
}

Result<std::string> stateDir(const std::string& name) {
  // Sticky and world-writable, like /tmp: the agent (root) and users' job
  // scripts both invoke the fakes, and whoever comes first creates the tree.
  const std::string root = stateRoot();
  ACCEL_TRY(ensureDirectory(root, 01777));
  std::string dir = root + "/" + name;
  ACCEL_TRY(ensureDirectory(dir, 01777));
  return dir;
}

Result<StateLock> StateLock::acquire(const std::string& dir) {
  const std::string path = dir + "/lock";
  // Read-only is enough for flock, so a lock file made by another user works.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sysError("open " + path, errno);
  (void)::fchmod(fd, 0666);  // as for calls.log; fails harmlessly if not ours
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    return sysError("flock " + path, err);
  }
  return StateLock(fd);
}

StateLock::~StateLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

Result<FileText> readText(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return FileText{};
    return sysError("open " + path, errno);
  }
  FileText out{true, {}};
  struct stat st {};
  if (::fstat(fd, &st) == 0) out.owner = st.st_uid;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Status writeText(const std::string& path, const std::string& text, unsigned mode) {
  return writeFileAtomic(path, text, static_cast<mode_t>(mode), {}, Durability::kProcessCrash);
}

void logCall(const std::string& dir, int argc, char** argv) {
  std::string line = fs::path(argv[0]).filename().string();
  bool mask_next = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (mask_next) arg = "***";
    mask_next = arg == "--api-access-key";
    if (arg.starts_with("--api-access-key=")) arg = "--api-access-key=***";
    line += " " + arg;
  }
  line += "\n";
  // One write() with O_APPEND: concurrent callers never interleave inside a line.
  int fd = ::open((dir + "/calls.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) return;
  (void)::fchmod(fd, 0666);  // past the umask, so other users can append; fails if not ours
  ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
}

double nowSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string rfc3339(double seconds) {
  double whole = std::floor(seconds);
  auto micros = static_cast<long>(std::lround((seconds - whole) * 1e6));
  auto secs = static_cast<time_t>(whole);
  if (micros >= 1000000) {
    secs += 1;
    micros -= 1000000;
  }
  tm utc{};
  ::gmtime_r(&secs, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, micros);
  return buf;
}

void sleepSeconds(double seconds, const volatile sig_atomic_t* stop) {
  if (seconds <= 0) return;
  timespec left{};
  left.tv_sec = static_cast<time_t>(seconds);
  left.tv_nsec = static_cast<long>((seconds - static_cast<double>(left.tv_sec)) * 1e9);
  while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
    if (stop != nullptr && *stop != 0) return;
  }
}

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "Error: %s\n", message.c_str());
  return code;
}

std::vector<std::string> argList(int argc, char** argv) {
  return std::vector<std::string>(argv + 1, argv + argc);
}

}  // namespace accel::hw_mock
