#include "accel/common/proc_stat.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>

namespace accel {
namespace {

// starttime is field 22; fields after the command name start at 3 (state).
constexpr int kStartTimeField = 22;
constexpr int kFirstFieldAfterComm = 3;
// A stat line is a few hundred bytes; the kernel caps the command at 64.
constexpr std::size_t kMaxStatBytes = 4096;

Error malformed(const std::string& why) { return Error(ErrorCode::kParse, "/proc stat: " + why); }

// Digits only, at most UINT64_MAX: no sign, no space, not empty.
bool parseDigits(std::string_view text, std::uint64_t* out) {
  if (text.empty()) return false;
  for (char c : text)
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

Result<std::uint64_t> parseStartTicks(std::string_view stat) {
  std::size_t open = stat.find(" (");
  std::size_t close = stat.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return malformed("no command name in parentheses");
  std::string_view rest = stat.substr(close + 1);
  int field = kFirstFieldAfterComm - 1;
  while (!rest.empty()) {
    if (rest.front() != ' ') return malformed("fields are not separated by single spaces");
    rest.remove_prefix(1);
    std::size_t end = rest.find_first_of(" \n");
    std::string_view value = rest.substr(0, end);
    ++field;
    if (field == kStartTimeField) {
      std::uint64_t ticks = 0;
      if (!parseDigits(value, &ticks)) return malformed("starttime is not a number");
      return ticks;
    }
    if (end == std::string_view::npos || rest[end] == '\n') break;
    rest.remove_prefix(end);
  }
  return malformed("only " + std::to_string(field) + " fields, starttime is field 22");
}

Result<std::uint64_t> readStartTicks(pid_t pid, const std::string& proc_root) {
  const std::string path = proc_root + "/" + std::to_string(pid) + "/stat";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ESRCH)
      return Error(ErrorCode::kNotFound, "process " + std::to_string(pid) + " is gone");
    return sysError("open " + path, err);
  }
  std::string text(kMaxStatBytes, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      if (err == ESRCH)
        return Error(ErrorCode::kNotFound, "process " + std::to_string(pid) + " is gone");
      return sysError("read " + path, err);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  auto ticks = parseStartTicks(text);
  if (!ticks.ok()) return ticks.error().context(path);
  return ticks;
}

}  // namespace accel
