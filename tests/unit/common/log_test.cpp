#include "accel/common/log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace accel::log {
namespace {

// Captures what a block writes to fd 2.
std::string captureStderr(void (*fn)()) {
  char path[] = "/tmp/accel-log-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  int saved = dup(STDERR_FILENO);
  dup2(fd, STDERR_FILENO);
  fn();
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::string out(4096, '\0');
  ssize_t n = pread(fd, out.data(), out.size(), 0);
  close(fd);
  unlink(path);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

TEST(LogTest, StderrSinkPrefixesIdentAndFiltersByLevel) {
  unsetenv("JOURNAL_STREAM");
  auto out = captureStderr([] {
    init("accel-test", Level::kInfo);
    info("prolog: job 1: ready");
    debug("hidden");
    error("epilog: job 1: failed");
  });
  EXPECT_EQ(out, "accel-test: prolog: job 1: ready\naccel-test: error: epilog: job 1: failed\n");
  EXPECT_FALSE(toJournal());
}

TEST(LogTest, JournalStreamOfAnotherFileIsNotTheJournal) {
  setenv("JOURNAL_STREAM", "1:1", 1);
  init("accel-test", Level::kInfo);
  EXPECT_FALSE(toJournal());
  unsetenv("JOURNAL_STREAM");
}

TEST(LogTest, ParsesLevels) {
  Level l{};
  EXPECT_TRUE(parseLevel("DEBUG", &l));
  EXPECT_EQ(l, Level::kDebug);
  EXPECT_TRUE(parseLevel("warning", &l));
  EXPECT_EQ(l, Level::kWarning);
  EXPECT_FALSE(parseLevel("loud", &l));
}

}  // namespace
}  // namespace accel::log
