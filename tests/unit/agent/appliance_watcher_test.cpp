#include "accel/agent/appliance_watcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace accel::agent {
namespace {

using appliance::ApplianceJob;
using appliance::ApplianceState;
using namespace std::chrono_literals;

constexpr int64_t kSec = 1'000'000'000;

// A stateful appliance: tests set its jobs and make it fail.
class FakeAppliance : public appliance::ApplianceClient {
 public:
  Result<std::vector<ApplianceJob>> jobs() override {
    std::lock_guard<std::mutex> g(mu);
    ++polls;
    if (down) return Error(ErrorCode::kUnavailable, "csctl get jobs: connection refused");
    return list;
  }
  Status cancel(const std::string& id) override {
    std::lock_guard<std::mutex> g(mu);
    cancelled.push_back(id);
    return okStatus();
  }
  std::string describe() const override { return "fake appliance"; }

  std::mutex mu;
  std::vector<ApplianceJob> list;
  std::vector<std::string> cancelled;
  bool down = false;
  std::atomic<int> polls{0};
};

ApplianceJob job(std::string id, uint32_t slurm, ApplianceState st, uint32_t systems, int64_t start = 0,
                 int64_t end = 0) {
  ApplianceJob j;
  j.id = std::move(id);
  j.slurm_job_id = slurm;
  j.state = st;
  j.systems = systems;
  j.start_ns = start;
  j.end_ns = end;
  return j;
}

struct ApplianceWatcherTest : ::testing::Test {
  std::shared_ptr<FakeAppliance> fake = std::make_shared<FakeAppliance>();
  std::vector<uint32_t> live = {65};
  std::vector<ApplianceJob> changes;
  int64_t now = 100 * kSec;
  ApplianceWatcher w{fake, 50ms, [this] { return live; }, [this](const ApplianceJob& j) { changes.push_back(j); },
                     [this] { return now; }};
};

TEST(ApplianceSeconds, CountsRunningTimeOnceAndNeverTheQueue) {
  EXPECT_EQ(applianceSeconds({}, 100 * kSec), 0.0);
  // Queued only: nothing.
  EXPECT_EQ(applianceSeconds({job("a", 1, ApplianceState::kQueued, 1)}, 100 * kSec), 0.0);
  // Ran 10..30, still running from 20: the overlap counts once, up to now=50.
  EXPECT_DOUBLE_EQ(applianceSeconds({job("a", 1, ApplianceState::kSucceeded, 0, 10 * kSec, 30 * kSec),
                                     job("b", 1, ApplianceState::kRunning, 1, 20 * kSec)},
                                    50 * kSec),
                   40.0);
  // Two runs with a gap between them: the gap does not count.
  EXPECT_DOUBLE_EQ(applianceSeconds({job("a", 1, ApplianceState::kSucceeded, 0, 10 * kSec, 20 * kSec),
                                     job("b", 1, ApplianceState::kFailed, 1, 40 * kSec, 45 * kSec)},
                                    100 * kSec),
                   15.0);
}

TEST_F(ApplianceWatcherTest, ReportsNewJobsAndStateChangesOnly) {
  now = 80 * kSec;
  fake->list = {job("wsjob-a", 65, ApplianceState::kQueued, 1), job("wsjob-other", 66, ApplianceState::kRunning, 2)};
  ASSERT_TRUE(w.pollOnce().ok());
  now = 85 * kSec;
  ASSERT_EQ(changes.size(), 1u) << "only the live Slurm job's appliance work";
  EXPECT_EQ(changes[0].id, "wsjob-a");
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(changes.size(), 1u) << "nothing changed, nothing reported";
  fake->list[0] = job("wsjob-a", 65, ApplianceState::kRunning, 1, 90 * kSec);
  now = 100 * kSec;
  ASSERT_TRUE(w.pollOnce().ok());
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].state, ApplianceState::kRunning);
  EXPECT_DOUBLE_EQ(w.secondsOf(65), 10.0);
  ASSERT_EQ(w.jobsOf(65).size(), 1u);
  EXPECT_TRUE(w.jobsOf(66).empty());
}

TEST_F(ApplianceWatcherTest, AnOutageIsRememberedAndKeepsWhatWasKnown) {
  fake->list = {job("wsjob-a", 65, ApplianceState::kRunning, 1, 90 * kSec)};
  ASSERT_TRUE(w.pollOnce().ok());
  fake->down = true;
  EXPECT_FALSE(w.pollOnce().ok());
  EXPECT_NE(w.lastError().find("connection refused"), std::string::npos);
  EXPECT_EQ(w.jobsOf(65).size(), 1u);
  fake->down = false;
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(w.lastError(), "");
  EXPECT_EQ(changes.size(), 1u);
}

TEST_F(ApplianceWatcherTest, JobsThatEndedHereAreForgottenAndNoPollIsMadeWithoutLiveJobs) {
  fake->list = {job("wsjob-a", 65, ApplianceState::kRunning, 1, 90 * kSec)};
  ASSERT_TRUE(w.pollOnce().ok());
  live.clear();
  int polls = fake->polls;
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(fake->polls, polls) << "no live job, no call to the appliance";
  EXPECT_TRUE(w.jobsOf(65).empty());
}

// The appliance's clock is not the node's: a start or end it reports is kept
// within the window in which the node saw the change (after the poll that saw
// the job otherwise, before the answer that shows it), so a skew of an hour
// either way costs at most one poll interval.
TEST_F(ApplianceWatcherTest, AppliancesTimesAreKeptWithinWhatTheNodeSaw) {
  const int64_t hour = 3600 * kSec;
  const int64_t t0 = int64_t{1'790'000'000} * kSec;  // in 2026: times count from the epoch
  now = t0 + 1000 * kSec;
  fake->list = {job("wsjob-a", 65, ApplianceState::kQueued, 1)};
  ASSERT_TRUE(w.pollOnce().ok());
  // Started (appliance clock an hour behind) between the node's 1000 s and 1001 s.
  now = t0 + 1001 * kSec;
  fake->list[0] = job("wsjob-a", 65, ApplianceState::kRunning, 1, t0 + 1000 * kSec + kSec / 2 - hour);
  ASSERT_TRUE(w.pollOnce().ok());
  ASSERT_EQ(w.jobsOf(65).size(), 1u);
  EXPECT_EQ(w.jobsOf(65)[0].start_ns, t0 + 1000 * kSec) << "not an hour early";
  EXPECT_DOUBLE_EQ(w.secondsOf(65), 1.0);
  // The start, once placed, stands, whatever the appliance says later.
  now = t0 + 1005 * kSec;
  fake->list[0].start_ns = t0 + 900 * kSec;
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(w.jobsOf(65)[0].start_ns, t0 + 1000 * kSec);
  // Ended, by the appliance's clock an hour ahead: no later than the answer.
  now = t0 + 1006 * kSec;
  fake->list[0] = job("wsjob-a", 65, ApplianceState::kSucceeded, 1, t0 + 900 * kSec, t0 + 1005 * kSec + hour);
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(w.jobsOf(65)[0].end_ns, t0 + 1006 * kSec);
  EXPECT_DOUBLE_EQ(w.secondsOf(65), 6.0);
  // A second job whose clocks agree with the node's keeps its exact times.
  now = t0 + 1010 * kSec;
  fake->list.push_back(job("wsjob-b", 65, ApplianceState::kRunning, 1, t0 + 1007 * kSec + kSec / 4));
  ASSERT_TRUE(w.pollOnce().ok());
  auto both = w.jobsOf(65);
  ASSERT_EQ(both.size(), 2u);
  for (const auto& j : both) {
    if (j.id == "wsjob-b") {
      EXPECT_EQ(j.start_ns, t0 + 1007 * kSec + kSec / 4);
    }
  }
}

TEST(ApplianceWatcherThread, PollsWhileJobsAreLiveAndSleepsOtherwise) {
  auto fake = std::make_shared<FakeAppliance>();
  std::mutex mu;
  std::vector<uint32_t> live;
  ApplianceWatcher w{fake, 20ms,
                     [&] {
                       std::lock_guard<std::mutex> g(mu);
                       return live;
                     },
                     [](const ApplianceJob&) {}, [] { return int64_t{0}; }};
  w.start();
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(fake->polls, 0) << "idle: the appliance is never asked";
  {
    std::lock_guard<std::mutex> g(mu);
    live = {7};
  }
  w.poke();
  for (int i = 0; i < 200 && fake->polls < 3; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_GE(fake->polls, 3) << "live job: polled every interval";
}

}  // namespace
}  // namespace accel::agent
