#include "accel/common/log.h"

#include <sys/stat.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace accel::log {
namespace {

std::mutex g_mu;
std::string g_ident = "accel";
std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
bool g_journal = false;

// systemd documents JOURNAL_STREAM as "<dev>:<ino>" of the stream it connected
// to stdout/stderr; matching it against fd 2 tells us the journal is listening
// even if stderr was later redirected elsewhere (then it would not match).
bool stderrIsJournal() {
  const char* env = std::getenv("JOURNAL_STREAM");
  if (env == nullptr) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(env, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

const char* levelTag(Level level) {
  switch (level) {
    case Level::kError:
      return "error: ";
    case Level::kWarning:
      return "warning: ";
    case Level::kInfo:
      return "";
    case Level::kDebug:
      return "debug: ";
  }
  return "";
}

}  // namespace

void init(std::string_view ident, Level min_level) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_ident = std::string(ident);
  g_level = static_cast<int>(min_level);
  g_journal = stderrIsJournal();
}

void setLevel(Level min_level) { g_level = static_cast<int>(min_level); }
Level level() { return static_cast<Level>(g_level.load()); }
bool toJournal() { return g_journal; }

bool parseLevel(std::string_view text, Level* out) {
  std::string t(text);
  for (auto& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "error")
    *out = Level::kError;
  else if (t == "warning")
    *out = Level::kWarning;
  else if (t == "info")
    *out = Level::kInfo;
  else if (t == "debug")
    *out = Level::kDebug;
  else
    return false;
  return true;
}

void write(Level lvl, std::string_view message) {
  if (static_cast<int>(lvl) > g_level.load()) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_journal) {
    sd_journal_send("MESSAGE=%.*s", static_cast<int>(message.size()), message.data(), "PRIORITY=%d",
                    static_cast<int>(lvl), "SYSLOG_IDENTIFIER=%s", g_ident.c_str(), nullptr);
    return;
  }
  std::string line = g_ident + ": " + levelTag(lvl) + std::string(message) + "\n";
  // One write(2) per line so concurrent writers never interleave within a line.
  ssize_t rc = ::write(STDERR_FILENO, line.data(), line.size());
  (void)rc;
}

}  // namespace accel::log
