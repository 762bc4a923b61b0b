// The idle decision (IdleWatch) on literal samples fed through JobTelemetry:
// the threshold, a busy sample resetting it, each job told once, 0 = off.
#include "accel/agent/idle_watch.h"

#include <gtest/gtest.h>

#include "accel/agent/job_telemetry.h"

namespace accel::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using telemetry::DeviceReading;

DeviceReading gpu(uint32_t index, uint32_t util) {
  DeviceReading r;
  r.index = index;
  r.utilization_pct = util;
  return r;
}

// Job 42 holds GPUs 0 and 1, job 43 GPU 2; one sample a second.
struct Node {
  JobTelemetry t;
  IdleWatch watch;
  Node() {
    t.startJob(42, {DeviceRef::at(0), DeviceRef::at(1)});
    t.startJob(43, {DeviceRef::at(2)});
  }
  void sample(uint32_t u0, uint32_t u1, uint32_t u2) {
    t.record({gpu(0, u0), gpu(1, u1), gpu(2, u2)}, {});
  }
  std::vector<IdleJob> check(seconds after) {
    return watch.check(idlenessOf(t.snapshots()), milliseconds(1000), after);
  }
};

TEST(IdleWatch, AJobIsIdleOnceEveryGpuReadZeroForIdleAfter) {
  Node n;
  n.sample(0, 0, 40);
  EXPECT_TRUE(n.check(seconds(3)).empty()) << "1 s idle of 3";
  n.sample(0, 0, 40);
  EXPECT_TRUE(n.check(seconds(3)).empty()) << "2 s idle of 3";
  n.sample(0, 0, 40);
  EXPECT_EQ(n.check(seconds(3)), (std::vector<IdleJob>{{42, 3, {0, 1}}}))
      << "3 samples at 0% a second apart: idle; job 43 busy";
}

TEST(IdleWatch, OneBusyGpuOrABusySampleResetsTheCount) {
  Node n;
  n.sample(0, 0, 0);
  n.sample(0, 5, 0);  // GPU 1 busy: job 42 starts again from zero
  n.sample(0, 0, 0);
  n.sample(0, 0, 0);
  EXPECT_EQ(n.check(seconds(3)), (std::vector<IdleJob>{{43, 4, {2}}}));
  n.sample(0, 0, 0);
  EXPECT_EQ(n.check(seconds(3)), (std::vector<IdleJob>{{42, 3, {0, 1}}}));
}

TEST(IdleWatch, EachJobIsToldOnceEvenIdleAgainAfterBusy) {
  Node n;
  for (int i = 0; i < 3; ++i) n.sample(0, 0, 9);
  ASSERT_EQ(n.check(seconds(2)).size(), 1u);
  n.sample(0, 0, 9);
  EXPECT_TRUE(n.check(seconds(2)).empty()) << "still idle: not told again";
  n.sample(50, 0, 9);
  for (int i = 0; i < 3; ++i) n.sample(0, 0, 9);
  EXPECT_TRUE(n.check(seconds(2)).empty()) << "busy, then idle again: still once per job";
  // The job ends; a new job under its id is judged afresh.
  n.t.endJob(42);
  EXPECT_TRUE(n.check(seconds(2)).empty());
  n.t.startJob(42, {DeviceRef::at(0)});
  n.sample(0, 7, 9);
  n.sample(0, 7, 9);
  EXPECT_EQ(n.check(seconds(2)), (std::vector<IdleJob>{{42, 2, {0}}}));
}

TEST(IdleWatch, ZeroTurnsItOff) {
  Node n;
  for (int i = 0; i < 100; ++i) n.sample(0, 0, 0);
  EXPECT_TRUE(n.check(seconds(0)).empty());
  // Turned on later, the samples so far count.
  EXPECT_EQ(n.check(seconds(100)).size(), 2u);
}

TEST(IdleWatch, AJobNeverReadIsNotIdle) {
  JobTelemetry t;
  IdleWatch watch;
  t.startJob(7, {DeviceRef::at(5)});  // no reading names GPU 5
  for (int i = 0; i < 10; ++i) t.record({gpu(0, 0)}, {});
  EXPECT_TRUE(watch.check(idlenessOf(t.snapshots()), milliseconds(1000), seconds(1)).empty());
  // The idle time is samples times the interval: 10 s at a 10 s interval is 1 sample.
  JobIdleness one{8, 1, {0}};
  EXPECT_TRUE(watch.check({one}, milliseconds(10'000), seconds(11)).empty());
  EXPECT_EQ(watch.check({one}, milliseconds(10'000), seconds(10)),
            (std::vector<IdleJob>{{8, 10, {0}}}));
}

}  // namespace
}  // namespace accel::agent
