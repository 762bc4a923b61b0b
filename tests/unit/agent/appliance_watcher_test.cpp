#include "accel/agent/appliance_watcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "fake_appliance.h"
#include "fake_clock.h"

namespace accel::agent {
namespace {

using appliance::ApplianceJob;
using appliance::ApplianceState;
using namespace std::chrono_literals;

constexpr int64_t kSec = 1'000'000'000;

using appliance::FakeAppliance;

ApplianceJob job(std::string id, uint32_t slurm, ApplianceState st, uint32_t systems,
                 int64_t start = 0, int64_t end = 0) {
  ApplianceJob j;
  j.id = std::move(id);
  j.slurm_job_id = slurm;
  j.state = st;
  j.systems = systems;
  j.start_ns = start;
  j.end_ns = end;
  j.user = "alice";  // the user of every live job here unless a test says otherwise
  j.uid = 1001;
  return j;
}

LiveJob liveJob(uint32_t id, uint32_t uid = 1001, std::string user = "alice") {
  return {id, uid, std::move(user)};
}

struct ApplianceWatcherTest : ::testing::Test {
  std::shared_ptr<FakeAppliance> fake = std::make_shared<FakeAppliance>();
  std::vector<LiveJob> live = {liveJob(65)};
  std::vector<ApplianceJob> changes, ignored;
  support::FakeClock clock{100 * kSec};
  ApplianceWatcher w{fake,
                     50ms,
                     [this] { return live; },
                     [this](const ApplianceJob& j) { changes.push_back(j); },
                     clock,
                     [this](const ApplianceJob& j) { ignored.push_back(j); }};
};

TEST(ApplianceSeconds, CountsRunningTimeOnceAndNeverTheQueue) {
  EXPECT_EQ(applianceSeconds({}, 100 * kSec), 0.0);
  // Queued only: nothing.
  EXPECT_EQ(applianceSeconds({job("a", 1, ApplianceState::kQueued, 1)}, 100 * kSec), 0.0);
  // Ran 10..30, still running from 20: the overlap counts once, up to now=50.
  EXPECT_DOUBLE_EQ(
      applianceSeconds({job("a", 1, ApplianceState::kSucceeded, 0, 10 * kSec, 30 * kSec),
                        job("b", 1, ApplianceState::kRunning, 1, 20 * kSec)},
                       50 * kSec),
      40.0);
  // Two runs with a gap between them: the gap does not count.
  EXPECT_DOUBLE_EQ(
      applianceSeconds({job("a", 1, ApplianceState::kSucceeded, 0, 10 * kSec, 20 * kSec),
                        job("b", 1, ApplianceState::kFailed, 1, 40 * kSec, 45 * kSec)},
                       100 * kSec),
      15.0);
}

TEST_F(ApplianceWatcherTest, ReportsNewJobsAndStateChangesOnly) {
  clock.advanceTo(80 * kSec);
  fake->list = {job("wsjob-a", 65, ApplianceState::kQueued, 1),
                job("wsjob-other", 66, ApplianceState::kRunning, 2)};
  ASSERT_TRUE(w.pollOnce().ok());
  clock.advanceTo(85 * kSec);
  ASSERT_EQ(changes.size(), 1u) << "only the live Slurm job's appliance work";
  EXPECT_EQ(changes[0].id, "wsjob-a");
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(changes.size(), 1u) << "nothing changed, nothing reported";
  fake->list[0] = job("wsjob-a", 65, ApplianceState::kRunning, 1, 90 * kSec);
  clock.advanceTo(100 * kSec);
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

// A requeued job's later run: the appliance still lists the first run's
// appliance jobs under the job's label. Those already over when the run is
// first seen are the earlier run's: never reported, never counted, also once
// they are listed beside the new run's own; the new run's own appliance jobs
// are followed as ever, also when they end. A first run keeps everything.
TEST_F(ApplianceWatcherTest, ALaterRunOfARequeuedJobLeavesTheEarlierRunsApplianceJobsOut) {
  live = {LiveJob{.id = 65, .uid = 1001, .user = "alice", .later_run = true}};
  clock.advanceTo(200 * kSec);
  fake->list = {job("wsjob-run0", 65, ApplianceState::kCancelled, 1, 10 * kSec, 40 * kSec),
                job("wsjob-run0-compile", 65, ApplianceState::kSucceeded, 0, 5 * kSec, 9 * kSec)};
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_TRUE(changes.empty()) << "the earlier run's appliance jobs are not this run's";
  EXPECT_TRUE(w.jobsOf(65).empty());
  EXPECT_DOUBLE_EQ(w.secondsOf(65), 0.0);
  fake->list.push_back(job("wsjob-run1", 65, ApplianceState::kRunning, 1, 205 * kSec));
  clock.advanceTo(210 * kSec);
  ASSERT_TRUE(w.pollOnce().ok());
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].id, "wsjob-run1");
  EXPECT_DOUBLE_EQ(w.secondsOf(65), 5.0);
  fake->list.back() = job("wsjob-run1", 65, ApplianceState::kSucceeded, 1, 205 * kSec, 212 * kSec);
  clock.advanceTo(215 * kSec);
  ASSERT_TRUE(w.pollOnce().ok());
  ASSERT_EQ(changes.size(), 2u) << "the run's own job is followed to its end";
  EXPECT_EQ(w.jobsOf(65).size(), 1u);
  EXPECT_DOUBLE_EQ(w.secondsOf(65), 7.0);

  // The same listing for a first run: all of it is the job's.
  live = {liveJob(66)};
  for (auto& j : fake->list) j.slurm_job_id = 66;
  changes.clear();
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(changes.size(), 3u);
}

// The appliance's clock is not the node's: a start or end it reports is kept
// within the window in which the node saw the change (after the poll that saw
// the job otherwise, before the answer that shows it), so a skew of an hour
// either way costs at most one poll interval.
TEST_F(ApplianceWatcherTest, AppliancesTimesAreKeptWithinWhatTheNodeSaw) {
  const int64_t hour = 3600 * kSec;
  const int64_t t0 = int64_t{1'790'000'000} * kSec;  // in 2026: times count from the epoch
  clock.advanceTo(t0 + 1000 * kSec);
  fake->list = {job("wsjob-a", 65, ApplianceState::kQueued, 1)};
  ASSERT_TRUE(w.pollOnce().ok());
  // Started (appliance clock an hour behind) between the node's 1000 s and 1001 s.
  clock.advanceTo(t0 + 1001 * kSec);
  fake->list[0] =
      job("wsjob-a", 65, ApplianceState::kRunning, 1, t0 + 1000 * kSec + kSec / 2 - hour);
  ASSERT_TRUE(w.pollOnce().ok());
  ASSERT_EQ(w.jobsOf(65).size(), 1u);
  EXPECT_EQ(w.jobsOf(65)[0].start_ns, t0 + 1000 * kSec) << "not an hour early";
  EXPECT_DOUBLE_EQ(w.secondsOf(65), 1.0);
  // The start, once placed, stands, whatever the appliance says later.
  clock.advanceTo(t0 + 1005 * kSec);
  fake->list[0].start_ns = t0 + 900 * kSec;
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(w.jobsOf(65)[0].start_ns, t0 + 1000 * kSec);
  // Ended, by the appliance's clock an hour ahead: no later than the answer.
  clock.advanceTo(t0 + 1006 * kSec);
  fake->list[0] =
      job("wsjob-a", 65, ApplianceState::kSucceeded, 1, t0 + 900 * kSec, t0 + 1005 * kSec + hour);
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(w.jobsOf(65)[0].end_ns, t0 + 1006 * kSec);
  EXPECT_DOUBLE_EQ(w.secondsOf(65), 6.0);
  // A second job whose clocks agree with the node's keeps its exact times.
  clock.advanceTo(t0 + 1010 * kSec);
  fake->list.push_back(
      job("wsjob-b", 65, ApplianceState::kRunning, 1, t0 + 1007 * kSec + kSec / 4));
  ASSERT_TRUE(w.pollOnce().ok());
  auto both = w.jobsOf(65);
  ASSERT_EQ(both.size(), 2u);
  for (const auto& j : both) {
    if (j.id == "wsjob-b") {
      EXPECT_EQ(j.start_ns, t0 + 1007 * kSec + kSec / 4);
    }
  }
}

// The label is the submitter's to write: an appliance job labelled with a
// Slurm job counts for it only when the appliance says that job's user
// submitted it. Another user's, or one whose submitter is not reported, is
// ignored, and told once while it is listed.
TEST_F(ApplianceWatcherTest, AnotherUsersJobWithThisJobsLabelIsIgnoredAndToldOnce) {
  clock.advanceTo(100 * kSec);
  auto evil = job("wsjob-evil", 65, ApplianceState::kRunning, 4, 10 * kSec);
  evil.user = "mallory";
  evil.uid = 1002;
  auto nameless = job("wsjob-anon", 65, ApplianceState::kRunning, 1, 10 * kSec);
  nameless.user.clear();
  nameless.uid = -1;
  auto by_name = job("wsjob-byname", 65, ApplianceState::kQueued, 1);
  by_name.uid = -1;  // an appliance that reports names only: the name decides
  fake->list = {evil, job("wsjob-own", 65, ApplianceState::kRunning, 1, 95 * kSec), nameless,
                by_name};
  ASSERT_TRUE(w.pollOnce().ok());
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].id, "wsjob-own");
  EXPECT_EQ(changes[1].id, "wsjob-byname");
  ASSERT_EQ(ignored.size(), 2u);
  EXPECT_EQ(ignored[0].id, "wsjob-evil");
  EXPECT_EQ(ignored[0].uid, 1002);
  EXPECT_EQ(ignored[1].id, "wsjob-anon");
  EXPECT_EQ(w.jobsOf(65).size(), 2u);
  EXPECT_DOUBLE_EQ(w.secondsOf(65), 5.0) << "the other user's 90 s do not count";
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(ignored.size(), 2u) << "told once while listed";
  fake->list = {job("wsjob-own", 65, ApplianceState::kRunning, 1, 95 * kSec)};
  ASSERT_TRUE(w.pollOnce().ok());
  fake->list.push_back(evil);
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(ignored.size(), 3u) << "listed again after it was gone: told again";
  // The same uid under another name is the same user (uids decide when reported).
  live = {liveJob(65, 1002, "renamed")};
  changes.clear();
  ASSERT_TRUE(w.pollOnce().ok());
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].id, "wsjob-evil");
}

TEST(ApplianceAttribution, OwnedEntriesPerJobAreCappedAndTheRestCountAsOne) {
  std::vector<ApplianceJob> listed;
  for (size_t i = 0; i < kMaxApplianceJobsPerJob + 10; ++i)
    listed.push_back(
        job("wsjob-" + std::to_string(i), 65, ApplianceState::kSucceeded, 0, kSec, 2 * kSec));
  listed.push_back(job("wsjob-other", 66, ApplianceState::kRunning, 1, kSec));
  listed.push_back(job("wsjob-notlive", 67, ApplianceState::kRunning, 1, kSec));
  auto a = attribute(listed, {liveJob(65), liveJob(66)});
  EXPECT_TRUE(a.foreign.empty());
  ASSERT_EQ(a.owned.size(), kMaxApplianceJobsPerJob + 2);
  const auto& rest = a.owned[kMaxApplianceJobsPerJob];
  EXPECT_EQ(rest.slurm_job_id, 65u);
  EXPECT_EQ(rest.id, "");
  EXPECT_EQ(rest.unreadable, "more than 64 appliance jobs");
  EXPECT_EQ(a.owned.back().id, "wsjob-other");
  // Another user's entries take none of the job's places.
  for (auto& j : listed) j.uid = 1002;
  a = attribute(listed, {liveJob(65)});
  EXPECT_TRUE(a.owned.empty());
  EXPECT_EQ(a.foreign.size(), kMaxApplianceJobsPerJob + 10);
}

// Fail closed, per job: an entry that cannot be read makes its own Slurm job
// count as using the appliance (from the poll that first saw it) and changes
// nothing for the other jobs. An entry read before keeps what was read.
TEST_F(ApplianceWatcherTest, AnUnreadableEntryCountsAsRunningForItsOwnJobOnly) {
  live = {liveJob(65), liveJob(66, 1003, "carol")};
  auto bad = job("wsjob-bad", 65, ApplianceState::kQueued, 0);
  bad.unreadable = "unknown job state \"EXPLODED\"";
  auto carol = job("wsjob-carol", 66, ApplianceState::kRunning, 1, 95 * kSec);
  carol.user = "carol";
  carol.uid = 1003;
  fake->list = {bad, carol};
  clock.advanceTo(100 * kSec);
  ASSERT_TRUE(w.pollOnce().ok());
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].id, "wsjob-bad");
  EXPECT_EQ(changes[0].state, ApplianceState::kRunning);
  EXPECT_EQ(changes[0].start_ns, 100 * kSec);
  EXPECT_NE(changes[0].unreadable, "");
  EXPECT_EQ(changes[1].id, "wsjob-carol");
  clock.advanceTo(110 * kSec);
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(changes.size(), 2u) << "still unreadable: no change";
  EXPECT_DOUBLE_EQ(w.secondsOf(65), 10.0);
  EXPECT_DOUBLE_EQ(w.secondsOf(66), 15.0) << "the other job is read as always";
  // Read at last: over, never started. The placeholder's run ends at this poll.
  clock.advanceTo(120 * kSec);
  fake->list[0] = job("wsjob-bad", 65, ApplianceState::kCancelled, 0, 0, 0);
  ASSERT_TRUE(w.pollOnce().ok());
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[2].state, ApplianceState::kCancelled);
  EXPECT_EQ(changes[2].start_ns, 100 * kSec) << "counted from the poll that first saw the entry";
  EXPECT_EQ(changes[2].end_ns, 120 * kSec);
  EXPECT_EQ(changes[2].unreadable, "");
  EXPECT_DOUBLE_EQ(w.secondsOf(65), 20.0);
  // carol's job, read before, turns unreadable: what was read stands.
  fake->list[1].unreadable = "bad \"systems\"";
  fake->list[1].state = ApplianceState::kQueued;
  fake->list[1].start_ns = 0;
  clock.advanceTo(130 * kSec);
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(changes.size(), 3u);
  ASSERT_EQ(w.jobsOf(66).size(), 1u);
  EXPECT_EQ(w.jobsOf(66)[0].state, ApplianceState::kRunning);
  EXPECT_DOUBLE_EQ(w.secondsOf(66), 35.0);
}

TEST_F(ApplianceWatcherTest, NamelessUnreadableEntriesAreOnePlaceholderThatEndsWhenTheyGo) {
  auto bad = job("", 65, ApplianceState::kQueued, 0);
  bad.unreadable = "item without a valid \"name\"";
  fake->list = {bad, bad, job("wsjob-ok", 65, ApplianceState::kSucceeded, 0, 10 * kSec, 20 * kSec)};
  clock.advanceTo(100 * kSec);
  ASSERT_TRUE(w.pollOnce().ok());
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].id, kUnreadableEntry);
  EXPECT_EQ(w.jobsOf(65).size(), 2u);
  clock.advanceTo(104 * kSec);
  fake->list.erase(fake->list.begin(), fake->list.begin() + 2);
  ASSERT_TRUE(w.pollOnce().ok());
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[2].id, kUnreadableEntry);
  EXPECT_EQ(changes[2].end_ns, 104 * kSec);
  EXPECT_TRUE(appliance::isFinal(changes[2].state));
  EXPECT_EQ(w.jobsOf(65).size(), 1u);
  // Another user's unreadable entry is theirs, not a reason to charge this job.
  auto foreign = bad;
  foreign.uid = 1002;
  fake->list.push_back(foreign);
  ASSERT_TRUE(w.pollOnce().ok());
  EXPECT_EQ(changes.size(), 3u);
  EXPECT_EQ(ignored.size(), 1u);
}

TEST(ApplianceWatcherThread, PollsWhileJobsAreLiveAndSleepsOtherwise) {
  auto fake = std::make_shared<FakeAppliance>();
  std::mutex mu;
  std::vector<LiveJob> live;
  support::FakeClock clock{0};
  ApplianceWatcher w{fake, 20ms,
                     [&] {
                       std::lock_guard<std::mutex> g(mu);
                       return live;
                     },
                     [](const ApplianceJob&) {}, clock};
  w.start();
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(fake->polls, 0) << "idle: the appliance is never asked";
  {
    std::lock_guard<std::mutex> g(mu);
    live = {liveJob(7)};
  }
  w.poke();
  for (int i = 0; i < 200 && fake->polls < 3; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_GE(fake->polls, 3) << "live job: polled every interval";
}

}  // namespace
}  // namespace accel::agent
