#pragma once
// What every fake client shares: where its state lives, how state changes are
// serialised between concurrent invocations, the call log, and the clock.
// Failures here are the test harness's problem, so callers print and exit.
#include <csignal>
#include <string>
#include <vector>

#include "accel/common/result.h"

namespace accel::hw_mock {

// The root of all fake state: $ACCEL_HW_MOCK_STATE if set and non-empty,
// else <directory of the running executable>/../state.
std::string stateRoot();

// <root>/<name>, created (with parents) if missing.
Result<std::string> stateDir(const std::string& name);

// Creates `path` if missing; only a directory this call created gets `mode`
// (a directory made by another user keeps its owner and mode).
Status ensureDirectory(const std::string& path, unsigned mode);

// An exclusive flock on <dir>/lock, held for the object's lifetime. Every
// read-modify-write of a fake's state happens under it.
class StateLock {
 public:
  static Result<StateLock> acquire(const std::string& dir);
  StateLock(StateLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;
  StateLock& operator=(StateLock&&) = delete;
  ~StateLock();

 private:
  explicit StateLock(int fd) : fd_(fd) {}
  int fd_;
};

// Whole-file read; a missing file is an empty optional-like result: ok with
// `exists` false.
struct FileText {
  bool exists = false;
  std::string text;
  unsigned owner = 0;  // the file's owner (uid)
};
Result<FileText> readText(const std::string& path);

// Temp file + rename in the same directory; readers never see a torn file.
Status writeText(const std::string& path, const std::string& text, unsigned mode = 0644);

// Appends one line to <dir>/calls.log: the program's base name and its
// arguments, space-joined, with the value of --api-access-key masked as ***.
void logCall(const std::string& dir, int argc, char** argv);

// Wall-clock time (CLOCK_REALTIME) in seconds with sub-second precision.
double nowSeconds();

// RFC 3339 in UTC with microseconds: 2024-05-01T12:00:00.250000Z.
std::string rfc3339(double seconds);

// Sleeps `seconds` (fractional), resuming after signals unless `*stop` is set.
void sleepSeconds(double seconds, const volatile sig_atomic_t* stop = nullptr);

// Prints "Error: <message>" on stderr and returns `code`, for `return fail(...)`.
int fail(const std::string& message, int code = 1);

// The arguments after argv[0], as strings.
std::vector<std::string> argList(int argc, char** argv);

}  // namespace accel::hw_mock
