#include "fake_clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace accel::support {
namespace {

using namespace std::chrono_literals;
constexpr int64_t kSec = FakeClock::kSec;

TEST(FakeClockTest, TimePassesOnlyWhenTheTestMovesIt) {
  FakeClock clock(100 * kSec, 7 * kSec);
  const Clock& seen = clock;  // as the code under test reads it
  EXPECT_EQ(seen.wallNs(), 100 * kSec);
  EXPECT_EQ(seen.monoNs(), 7 * kSec);
  clock.advance(1500ms);
  EXPECT_EQ(seen.wallNs(), 101'500'000'000);
  EXPECT_EQ(seen.monoNs(), 8'500'000'000);
  clock.advanceTo(110 * kSec);
  EXPECT_EQ(clock.wallNs(), 110 * kSec);
  EXPECT_EQ(clock.monoNs(), 17 * kSec);
}

TEST(FakeClockTest, AStepOfTheWallClockLeavesTheMonotonicClock) {
  FakeClock clock(100 * kSec, 7 * kSec);
  clock.stepWall(-3600 * kSec);
  EXPECT_EQ(clock.wallNs(), (100 - 3600) * kSec);
  EXPECT_EQ(clock.monoNs(), 7 * kSec);
  clock.stepWall(+7200 * kSec);
  EXPECT_EQ(clock.wallNs(), (100 + 3600) * kSec);
  EXPECT_EQ(clock.monoNs(), 7 * kSec);
}

TEST(FakeClockTest, SteadyReadingsAndSleepsAreTheMonotonicTime) {
  FakeClock clock(100 * kSec, 7 * kSec);
  const Clock& seen = clock;
  const auto before = seen.steadyNow();
  EXPECT_EQ(before.time_since_epoch(), 7s);
  seen.sleepFor(250ms);
  EXPECT_EQ(seen.steadyNow() - before, 250ms);
  EXPECT_EQ(clock.wallNs(), 100 * kSec + 250'000'000);
}

TEST(FakeClockTest, AnotherThreadSeesEveryAdvance) {
  FakeClock clock(0, 0);
  std::thread reader([&] {
    int64_t last = 0;
    while (last < 1000) {
      const int64_t now = clock.monoNs();
      EXPECT_GE(now, last);
      last = now;
    }
  });
  for (int i = 0; i < 1000; ++i) clock.advance(1);
  reader.join();
  EXPECT_EQ(clock.monoNs(), 1000);
}

}  // namespace
}  // namespace accel::support
