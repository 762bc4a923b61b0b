#include "accel/events/reconnect_backoff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace accel::event {
namespace {

using ms = std::chrono::milliseconds;

TEST(ReconnectBackoffTest, EachWaitLiesInTheUpperHalfOfABoundThatDoublesUpToTheMaximum) {
  ReconnectBackoff b(ms(100), ms(1000), 7);
  const std::vector<int64_t> bounds = {100, 200, 400, 800, 1000, 1000, 1000};
  for (int64_t bound : bounds) {
    ASSERT_EQ(b.bound().count(), bound);
    ms wait = b.next();
    EXPECT_GE(wait.count(), bound / 2) << "bound " << bound;
    EXPECT_LE(wait.count(), bound) << "bound " << bound;
  }
}

TEST(ReconnectBackoffTest, ALinkThatCameUpStartsTheBoundAgainFromTheMinimum) {
  ReconnectBackoff b(ms(50), ms(10000), 1);
  for (int i = 0; i < 6; ++i) (void)b.next();
  EXPECT_EQ(b.bound().count(), 3200);
  b.reset();
  EXPECT_EQ(b.bound().count(), 50);
  EXPECT_LE(b.next().count(), 50);
}

// The point of the randomness: nodes that lost the aggregator together (it
// restarted) must not all come back at the same instant.
TEST(ReconnectBackoffTest, NodesThatLostTheLinkTogetherSpreadTheirFirstAttemptsOverHalfTheBound) {
  std::vector<int64_t> first;
  for (uint64_t node = 0; node < 1000; ++node)
    first.push_back(ReconnectBackoff(ms(1000), ms(30000), node).next().count());
  std::sort(first.begin(), first.end());
  EXPECT_GE(first.front(), 500);
  EXPECT_LE(first.back(), 1000);
  EXPECT_GT(first.back() - first.front(), 450) << "the waits should cover most of [500, 1000]";
  // No 50 ms slice of the window holds more than a fifth of the nodes (even: a tenth).
  for (int64_t start = 500; start < 1000; start += 50) {
    auto n = std::count_if(first.begin(), first.end(),
                           [&](int64_t w) { return w >= start && w < start + 50; });
    EXPECT_LT(n, 200) << "waits in [" << start << ", " << start + 50 << ")";
  }
}

TEST(ReconnectBackoffTest, OddBoundsAreKeptSane) {
  ReconnectBackoff zero(ms(0), ms(0), 3);
  EXPECT_EQ(zero.bound().count(), 1);
  EXPECT_LE(zero.next().count(), 1);
  ReconnectBackoff inverted(ms(500), ms(100), 3);  // max below min: min wins
  (void)inverted.next();
  EXPECT_EQ(inverted.bound().count(), 500);
}

}  // namespace
}  // namespace accel::event
