// Appliance time accounting and the limit's deadlines, on an injected clock.
#include "accel/agent/appliance_budget.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>

#include "accel/agent/job_manager.h"
#include "accel/agent/per_job_cap.h"
#include "accel/common/safe_file.h"
#include "fake_clock.h"
#include "temp_dir.h"

namespace accel::agent {
namespace {

using appliance::ApplianceJob;
using appliance::ApplianceState;

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kT0 = 1'800'000'000 * kSec;  // an arbitrary wall-clock instant

ApplianceJob applianceJob(const std::string& id, ApplianceState state, int64_t start,
                          int64_t end = 0) {
  ApplianceJob j;
  j.id = id;
  j.slurm_job_id = 7;
  j.state = state;
  j.create_ns = kT0;
  j.start_ns = start;
  j.end_ns = end;
  return j;
}

LimitPolicy policy(int64_t limit_sec, int32_t signal = 0, uint32_t lead = 0) {
  return LimitPolicy{
      .limit_sec = limit_sec, .signal = signal, .lead_sec = lead, .grace_ns = 30 * kSec};
}

TEST(ApplianceBudgetTest, QueueTimeNeverCountsAndOverlapsCountOnce) {
  ApplianceBudget b;
  EXPECT_FALSE(noteApplianceJob(b, applianceJob("wsjob-a", ApplianceState::kQueued, 0)));
  EXPECT_EQ(usedNs(b, kT0 + 100 * kSec), 0);
  // Runs 20 s after creation, for 10 s; a second job overlaps its last 5 s.
  EXPECT_TRUE(noteApplianceJob(
      b, applianceJob("wsjob-a", ApplianceState::kSucceeded, kT0 + 20 * kSec, kT0 + 30 * kSec)));
  EXPECT_TRUE(
      noteApplianceJob(b, applianceJob("wsjob-b", ApplianceState::kRunning, kT0 + 25 * kSec)));
  EXPECT_FALSE(
      noteApplianceJob(b, applianceJob("wsjob-b", ApplianceState::kRunning, kT0 + 25 * kSec)));
  EXPECT_EQ(usedNs(b, kT0 + 40 * kSec), 20 * kSec);  // 20..40, once
}

TEST(ApplianceBudgetTest, DeadlineAndWarningFollowTheRunningJob) {
  ApplianceBudget b;
  noteApplianceJob(b, applianceJob("wsjob-a", ApplianceState::kRunning, kT0 + 20 * kSec));
  auto t = limitTimes(b, policy(10, 10, 3), kT0 + 21 * kSec);
  EXPECT_EQ(t.enforce_ns, kT0 + 30 * kSec);
  EXPECT_EQ(t.warn_ns, kT0 + 27 * kSec);
  EXPECT_EQ(t.kill_ns, 0);
  EXPECT_EQ(t.earliest(), kT0 + 27 * kSec);
  EXPECT_EQ(dueAction(b, policy(10, 10, 3), kT0 + 27 * kSec - 1), LimitAction::kNone);
  EXPECT_EQ(dueAction(b, policy(10, 10, 3), kT0 + 27 * kSec), LimitAction::kWarn);
  b.warned_ns = kT0 + 27 * kSec;
  EXPECT_EQ(dueAction(b, policy(10, 10, 3), kT0 + 29 * kSec), LimitAction::kNone);
  EXPECT_EQ(dueAction(b, policy(10, 10, 3), kT0 + 30 * kSec), LimitAction::kEnforce);
  b.enforced_ns = kT0 + 30 * kSec;
  EXPECT_EQ(limitTimes(b, policy(10), kT0 + 31 * kSec).kill_ns, kT0 + 60 * kSec);
  EXPECT_EQ(dueAction(b, policy(10), kT0 + 60 * kSec), LimitAction::kKill);
  b.killed_ns = kT0 + 60 * kSec;
  EXPECT_EQ(limitTimes(b, policy(10), kT0 + 61 * kSec).earliest(), 0);
}

TEST(ApplianceBudgetTest, AJobThatStopsMovesTheDeadlineAwayAndTheNextBringsItBack) {
  ApplianceBudget b;
  noteApplianceJob(b, applianceJob("wsjob-a", ApplianceState::kRunning, kT0));
  noteApplianceJob(b, applianceJob("wsjob-a", ApplianceState::kSucceeded, kT0, kT0 + 4 * kSec));
  EXPECT_EQ(limitTimes(b, policy(10), kT0 + 100 * kSec).earliest(), 0)
      << "idle with 6 s left: nothing due";
  noteApplianceJob(b, applianceJob("wsjob-b", ApplianceState::kRunning, kT0 + 50 * kSec));
  EXPECT_EQ(limitTimes(b, policy(10), kT0 + 51 * kSec).enforce_ns, kT0 + 56 * kSec);
}

TEST(ApplianceBudgetTest, GapsBetweenLocalStepsDoNotCount) {
  ApplianceBudget b;
  EXPECT_TRUE(noteLocalSteps(b, true, kT0));
  EXPECT_FALSE(noteLocalSteps(b, true, kT0 + kSec));
  EXPECT_TRUE(noteLocalSteps(b, false, kT0 + 4 * kSec));
  EXPECT_FALSE(noteLocalSteps(b, false, kT0 + 5 * kSec));
  EXPECT_TRUE(noteLocalSteps(b, true, kT0 + 10 * kSec));
  EXPECT_EQ(usedNs(b, kT0 + 12 * kSec), 6 * kSec);
  EXPECT_EQ(limitTimes(b, policy(10), kT0 + 12 * kSec).enforce_ns, kT0 + 16 * kSec);
}

// Two nodes of one job past its limit: on one the steps obeyed SIGTERM, on the
// other they ignored it until SIGKILL. The job ends on both together, so both
// count the same time: up to the epilog, never past SIGKILL.
TEST(ApplianceBudgetTest, PastTheLimitEveryNodeCountsUntilTheJobIsOverThere) {
  auto node = [](int64_t steps_end) {
    ApplianceBudget b;
    noteLocalSteps(b, true, kT0);
    b.enforced_ns = kT0 + 6 * kSec;
    noteLocalSteps(b, false, steps_end);
    return b;
  };
  ApplianceBudget obeyed = node(kT0 + 7 * kSec);
  ApplianceBudget ignored = node(kT0 + 11 * kSec + kSec / 100);
  ignored.killed_ns = kT0 + 11 * kSec;
  // Before the epilog the steps' own time; at the epilog the job's.
  EXPECT_EQ(usedNs(obeyed, kT0 + 12 * kSec), 7 * kSec);
  const int64_t epilog = kT0 + 11 * kSec + kSec / 5;
  EXPECT_EQ(usedAtEndNs(ignored, epilog), 11 * kSec);
  EXPECT_EQ(usedAtEndNs(obeyed, epilog), 11 * kSec + kSec / 5);
  obeyed.killed_ns = kT0 + 11 * kSec;  // SIGKILL found nothing: the time still stops there
  EXPECT_EQ(usedAtEndNs(obeyed, epilog), 11 * kSec);
  // A job over at SIGTERM counts to its epilog; one under its limit as before.
  EXPECT_EQ(usedAtEndNs(node(kT0 + 6 * kSec), kT0 + 6 * kSec + kSec / 2), 6 * kSec + kSec / 2);
  ApplianceBudget under;
  noteLocalSteps(under, true, kT0);
  noteLocalSteps(under, false, kT0 + 3 * kSec);
  EXPECT_EQ(usedAtEndNs(under, kT0 + 9 * kSec), 3 * kSec);
}

TEST(ApplianceBudgetTest, ExhaustedWhileIdleIsDueAtOnceAndNoLimitIsNeverDue) {
  ApplianceBudget b;
  // The job ran past its limit while nobody watched (the daemon was down).
  noteApplianceJob(b, applianceJob("wsjob-a", ApplianceState::kSucceeded, kT0, kT0 + 20 * kSec));
  EXPECT_EQ(dueAction(b, policy(10), kT0 + 25 * kSec), LimitAction::kEnforce);
  EXPECT_EQ(dueAction(b, policy(-1), kT0 + 25 * kSec), LimitAction::kNone);
  EXPECT_EQ(dueAction(b, policy(0), kT0 + 25 * kSec), LimitAction::kNone);
}

// ApplianceTimeOnRequeue=cumulative: what earlier runs used shortens this
// run's limit, and is never part of this run's own used time; a run left with
// nothing is warned and stopped as soon as anything of it runs, not before.
TEST(ApplianceBudgetTest, TimeCarriedFromEarlierRunsShortensTheLimit) {
  ApplianceBudget b;
  b.carried_ns = 4 * kSec;
  EXPECT_EQ(limitTimes(b, policy(10, 10, 3), kT0).earliest(), 0) << "nothing runs yet";
  EXPECT_TRUE(noteLocalSteps(b, true, kT0));
  auto t = limitTimes(b, policy(10, 10, 3), kT0 + kSec);
  EXPECT_EQ(t.enforce_ns, kT0 + 6 * kSec);
  EXPECT_EQ(t.warn_ns, kT0 + 3 * kSec);
  EXPECT_EQ(usedNs(b, kT0 + 2 * kSec), 2 * kSec) << "this run's own time";
  ApplianceBudget spent;
  spent.carried_ns = 12 * kSec;
  EXPECT_EQ(dueAction(spent, policy(10, 10, 3), kT0), LimitAction::kNone)
      << "idle: nothing to stop yet";
  EXPECT_TRUE(noteLocalSteps(spent, true, kT0));
  EXPECT_EQ(dueAction(spent, policy(10, 10, 3), kT0), LimitAction::kWarn);
  spent.warned_ns = kT0;
  EXPECT_EQ(dueAction(spent, policy(10, 10, 3), kT0 + 1), LimitAction::kEnforce);
}

TEST(ApplianceBudgetTest, LeadLongerThanTheLimitWarnsAtTheStart) {
  ApplianceBudget b;
  noteApplianceJob(b, applianceJob("wsjob-a", ApplianceState::kRunning, kT0));
  EXPECT_EQ(dueAction(b, policy(5, 12, 60), kT0), LimitAction::kWarn);
}

TEST(ApplianceBudgetTest, RecordKeepsTheBudgetAndRefusesAMalformedRun) {
  JobRecord r;
  r.spec.job_id = 7;
  noteApplianceJob(r.budget, applianceJob("wsjob-a", ApplianceState::kRunning, kT0));
  noteLocalSteps(r.budget, true, kT0 + kSec);
  r.budget.warned_ns = kT0 + 2;
  r.budget.enforced_ns = kT0 + 3;
  auto back = decodeRecord(encodeRecord(r));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->budget, r.budget);
  auto bad = decodeRecord(
      R"({"job_id":7,"uid":1,"gid":1,"phase":"ready","appliance_runs":[["wsjob-a",1]]})");
  EXPECT_FALSE(bad.ok());
  auto old = decodeRecord(R"({"job_id":7,"uid":1,"gid":1,"phase":"ready"})");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->budget, ApplianceBudget{});
}

// A run opened while the job's entry could not be read (it counted as
// running) ends when the job is read as over without having started; a job
// read as still queued leaves it open.
TEST(ApplianceBudgetTest, APlaceholderRunEndsWhenItsJobIsReadOverWithoutAStart) {
  ApplianceBudget b;
  ASSERT_TRUE(noteApplianceJob(
      b, applianceJob("wsjob-a", ApplianceState::kRunning, kT0)));  // the placeholder
  EXPECT_FALSE(noteApplianceJob(b, applianceJob("wsjob-a", ApplianceState::kQueued, 0)));
  EXPECT_EQ(usedNs(b, kT0 + 5 * kSec), 5 * kSec);
  EXPECT_TRUE(
      noteApplianceJob(b, applianceJob("wsjob-a", ApplianceState::kCancelled, 0, kT0 + 7 * kSec)));
  EXPECT_EQ(usedNs(b, kT0 + 100 * kSec), 7 * kSec);
  EXPECT_FALSE(noteApplianceJob(b, applianceJob("wsjob-b", ApplianceState::kCancelled, 0, kT0)))
      << "a job never seen running adds nothing";
}

// The manager charges steps of a job with devices, persists the budget and a
// restarted manager finds the same deadline.
TEST(ApplianceBudgetTest, ManagerPersistsTheBudgetAndSurrogatesAcrossARestart) {
  support::TempDir tmp("accel-budget");
  const std::string root = tmp.path();
  support::FakeClock clock(kT0);
  Inventory inv;
  InventoryDevice d;
  d.slot = {0, "gpu", 0};
  d.name = "cuda0";
  inv.devices.push_back(d);
  auto make = [&] {
    auto m = std::make_unique<JobManager>(JobStore(root + "/state"), inv,
                                          std::vector<std::unique_ptr<JobStep>>{}, clock);
    EXPECT_TRUE(m->recover().ok());
    return m;
  };
  auto m = make();
  int changes = 0;
  m->setBudgetListener([&] { ++changes; });
  JobRequestSpec spec;
  spec.job_id = 9;
  spec.gpus = "0";
  spec.appliance_time_sec = 10;
  ASSERT_TRUE(m->prolog(spec).ok());
  ASSERT_TRUE(m->stepStarted(9, 0xFFFFFFFC).ok());  // the extern step holds no work
  EXPECT_EQ(changes, 0);
  clock.advanceTo(kT0 + 5 * kSec);  // prolog and queue time: not charged
  ASSERT_TRUE(m->stepStarted(9, 0).ok());
  EXPECT_EQ(changes, 1);
  ASSERT_TRUE(m->limitActionTaken(9, LimitAction::kWarn, kT0 + 6 * kSec).ok());
  auto first = m->claimSurrogate(9, "wsjob-a");
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(*first);
  const int before = changes;
  ASSERT_TRUE(m->surrogateStepStarted(9, 3).ok());
  EXPECT_EQ(changes, before + 1) << "the enforcer must learn whom the warning spares";
  EXPECT_EQ(m->claimSurrogate(99, "wsjob-a").error().code(), ErrorCode::kNotFound);
  m.reset();
  auto again = make();
  auto rec = again->job(9);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->budget.warned_ns, kT0 + 6 * kSec);
  auto second = again->claimSurrogate(9, "wsjob-a");  // never a second step after a restart
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  EXPECT_EQ(rec->surrogate_steps, std::vector<uint32_t>{3});
  EXPECT_EQ(limitTimes(rec->budget, limitPolicy(rec->spec, 30 * kSec), clock.wallNs()).enforce_ns,
            kT0 + 15 * kSec);
  clock.advanceTo(kT0 + 8 * kSec);
  ASSERT_TRUE(again->stepEnded(9, 0).ok());
  EXPECT_EQ(usedNs(again->job(9)->budget, kT0 + 100 * kSec), 3 * kSec);
  ASSERT_TRUE(again->epilog(9).ok());
  ASSERT_TRUE(tmp.remove());
}

// Surrogate steps are the job user's to multiply (one per appliance job, and
// the waiters report their steps themselves): a job gets at most
// kMaxSurrogateStepsPerJob of each, and no more spared steps.
TEST(ApplianceBudgetTest, SurrogateStepsAndTheStepsTheySpareAreCapped) {
  support::TempDir tmp("accel-budget");
  const std::string root = tmp.path();
  Inventory inv;
  support::FakeClock clock(kT0);
  JobManager m(JobStore(root + "/state"), inv, std::vector<std::unique_ptr<JobStep>>{}, clock);
  ASSERT_TRUE(m.recover().ok());
  JobRequestSpec spec;
  spec.job_id = 9;
  ASSERT_TRUE(m.prolog(spec).ok());
  for (size_t i = 0; i < kMaxSurrogateStepsPerJob; ++i) {
    auto c = m.claimSurrogate(9, "wsjob-" + std::to_string(i));
    ASSERT_TRUE(c.ok() && *c) << i;
  }
  auto over = m.claimSurrogate(9, "wsjob-more");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code(), ErrorCode::kConflict);
  auto known = m.claimSurrogate(9, "wsjob-0");  // already has its step: no error
  ASSERT_TRUE(known.ok());
  EXPECT_FALSE(*known);
  for (uint32_t step = 0; step < kMaxSurrogateStepsPerJob; ++step)
    ASSERT_TRUE(m.surrogateStepStarted(9, step).ok());
  EXPECT_TRUE(m.surrogateStepStarted(9, 3).ok()) << "a report again is no change";
  EXPECT_EQ(m.surrogateStepStarted(9, 1000).error().code(), ErrorCode::kConflict);
  auto rec = m.job(9);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->surrogates.size(), kMaxSurrogateStepsPerJob);
  EXPECT_EQ(rec->surrogate_steps.size(), kMaxSurrogateStepsPerJob);
  EXPECT_EQ(sparedSteps(*rec).size(), kMaxSurrogateStepsPerJob);
  ASSERT_TRUE(m.epilog(9).ok());
  ASSERT_TRUE(tmp.remove());
}

TEST(ApplianceBudgetTest, SparedStepsAreCappedWhateverTheRecordHolds) {
  JobRecord r;
  r.spec.job_id = 9;
  r.surrogate_steps = {4, 5, 6};
  EXPECT_EQ(sparedSteps(r), (std::vector<uint32_t>{4, 5, 6}));
  for (uint32_t i = 0; i < 200; ++i)
    r.surrogate_steps.push_back(100 + i);  // an older record, before the cap
  auto spared = sparedSteps(r);
  ASSERT_EQ(spared.size(), kMaxSurrogateStepsPerJob);
  EXPECT_EQ(spared.front(), 4u);
}

// What a job's user can make happen as often as they like is streamed up to a
// cap per job; the first refusal is told apart (one log line), and a job that
// ended here is forgotten.
TEST(PerJobCapTest, AllowsUpToTheCapPerJobAndSaysWhenItFirstRefuses) {
  PerJobCap cap(3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(cap.take(7), PerJobCap::Take::kAllowed);
  EXPECT_EQ(cap.take(7), PerJobCap::Take::kFirstRefused);
  EXPECT_EQ(cap.take(7), PerJobCap::Take::kRefused);
  EXPECT_EQ(cap.take(8), PerJobCap::Take::kAllowed) << "another job has its own share";
  cap.keepOnly({8});
  EXPECT_EQ(cap.take(7), PerJobCap::Take::kAllowed) << "job 7 ended here and was forgotten";
  EXPECT_EQ(cap.take(8), PerJobCap::Take::kAllowed);
  EXPECT_EQ(cap.take(8), PerJobCap::Take::kAllowed);
  EXPECT_EQ(cap.take(8), PerJobCap::Take::kFirstRefused);
}

}  // namespace
}  // namespace accel::agent
