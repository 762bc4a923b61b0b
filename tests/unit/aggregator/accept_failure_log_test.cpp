// The journal line for failed accepts: one line when failures start, none
// while the minute since the last line has not passed, then one counting only
// the failures since, and none at all without failures.
#include "accel/aggregator/accept_failure_log.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "accel/common/log.h"
#include "fake_clock.h"

namespace accel::aggregator {
namespace {

using std::chrono::seconds;

class AcceptFailureLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("JOURNAL_STREAM");  // lines go to stderr, where the test reads them
    log::init("accel-test", log::Level::kInfo);
  }

  // What one check writes to the log.
  std::string check() {
    ::testing::internal::CaptureStderr();
    log_.check(metrics_);
    return ::testing::internal::GetCapturedStderr();
  }

  void fail(AcceptFailure why, uint64_t n) { metrics_.accept_failures[size_t(why)] += n; }

  static int lines(const std::string& out) {
    int n = 0;
    for (char c : out) n += c == '\n';
    return n;
  }

  support::FakeClock clock_;
  Metrics metrics_;
  AcceptFailureLog log_{4096, clock_};
};

TEST_F(AcceptFailureLogTest, NoFailuresNoLine) {
  EXPECT_EQ(check(), "");
  clock_.advance(seconds(120));
  EXPECT_EQ(check(), "");
}

TEST_F(AcceptFailureLogTest, FirstFailuresGiveOneLineNamingTheLimit) {
  fail(AcceptFailure::kEmfile, 1500);
  std::string out = check();
  EXPECT_EQ(lines(out), 1) << out;
  EXPECT_NE(out.find("error:"), std::string::npos) << out;
  EXPECT_NE(out.find("1500 for want of descriptors"), std::string::npos) << out;
  EXPECT_NE(out.find("EMFILE"), std::string::npos) << out;
  EXPECT_NE(out.find("limit of 4096"), std::string::npos) << out;
  EXPECT_NE(out.find("LimitNOFILE"), std::string::npos) << out;
  EXPECT_NE(out.find("still served"), std::string::npos) << out;
  EXPECT_EQ(out.find("ENFILE"), std::string::npos) << out;  // no cause that did not occur
}

TEST_F(AcceptFailureLogTest, AtMostOneLineAMinuteCountingOnlyTheNewFailures) {
  fail(AcceptFailure::kEmfile, 10);
  ASSERT_EQ(lines(check()), 1);

  // More failures within the minute: nothing written.
  for (int i = 0; i < 5; ++i) {
    clock_.advance(seconds(11));
    fail(AcceptFailure::kEmfile, 7);
    EXPECT_EQ(check(), "") << "at " << 11 * (i + 1) << " s";
  }
  fail(AcceptFailure::kOther, 2);

  // A minute after the first line: one line, with the 35 + 2 since it.
  clock_.advance(seconds(5));
  std::string out = check();
  EXPECT_EQ(lines(out), 1) << out;
  EXPECT_NE(out.find("35 for want of descriptors (EMFILE"), std::string::npos) << out;
  EXPECT_NE(out.find("2 for other reasons"), std::string::npos) << out;
  EXPECT_EQ(out.find("45 "), std::string::npos) << out;  // the first 10 are not counted again

  // Nothing new since: no line, even long after.
  clock_.advance(seconds(300));
  EXPECT_EQ(check(), "");
  // New ones after a quiet spell are written at once.
  fail(AcceptFailure::kEnfile, 3);
  out = check();
  EXPECT_EQ(lines(out), 1) << out;
  EXPECT_NE(out.find("3 for want of descriptors system-wide (ENFILE"), std::string::npos) << out;
  EXPECT_EQ(out.find("EMFILE"), std::string::npos) << out;
}

}  // namespace
}  // namespace accel::aggregator
