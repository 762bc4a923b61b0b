// The limit enforcer on a FakeClock: time passes only when a test moves the
// clock, so deadlines are tested to the nanosecond and nothing sleeps.
//
// The enforcer's timer runs on the real CLOCK_BOOTTIME, armed for the time
// from `now` to the next deadline; a test that moves the clock calls
// rearm(), as the daemon does whenever something changes, and the deadline
// now reached fires at once. The only waits are for the enforcer's two
// threads to report what they did, bounded so that a broken enforcer fails
// rather than hangs. Every action is logged with the fake time it was taken
// at, so acting early or late shows as a wrong time, not as a slow test.
#include "accel/agentd/limit_enforcer.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accel/common/clock.h"
#include "fake_clock.h"
#include "temp_dir.h"

namespace accel::agentd {
namespace {

using support::FakeClock;
using support::TempDir;

constexpr int64_t kSec = FakeClock::kSec;
constexpr int64_t kT0 = FakeClock::kDefaultWallNs;
constexpr int64_t kGrace = 30 * kSec;

// One thing the enforcer did, at the fake time it did it. Tasks have pids
// job * 100 + n, so a signal names its job.
struct Seen {
  std::string what;  // "signal", "cancel", "warning", "enforced"
  uint32_t job = 0;
  int value = 0;  // signal: the signal; warning: seconds left; enforced: seconds used
  int tasks = 0;  // signal: how many tasks
  int64_t at = 0;
  bool operator==(const Seen&) const = default;
};

void PrintTo(const Seen& s, std::ostream* os) {
  *os << s.what << " job " << s.job << " value " << s.value << " tasks " << s.tasks << " at "
      << s.at;
}

Seen signal(uint32_t job, int sig, int tasks, int64_t at) {
  return {"signal", job, sig, tasks, at};
}
Seen cancel(uint32_t job, int64_t at) { return {"cancel", job, 0, 0, at}; }
Seen warning(uint32_t job, int left_s, int64_t at) { return {"warning", job, left_s, 0, at}; }
Seen enforced(uint32_t job, int used_s, int64_t at) { return {"enforced", job, used_s, 0, at}; }

struct JobSetup {
  uint32_t id = 0;
  int64_t limit_s = 10;
  int64_t running_since = kT0;  // its appliance job's start
  int tasks = 1;
  int signal = 0;  // --appliance-signal, 0: none
  uint32_t lead_s = 0;
  std::string node = "n1";
  std::string node_list = "n1";
};

class LimitEnforcerTest : public ::testing::Test {
 protected:
  // `clock_start`: where the fake job clock starts (default kT0).
  void startManager(int64_t clock_start = kT0) {
    clock_ = std::make_unique<FakeClock>(clock_start);
    manager_ = std::make_unique<agent::JobManager>(
        agent::JobStore(dir_.file("state")), agent::Inventory{},
        std::vector<std::unique_ptr<agent::JobStep>>{}, *clock_);
    // As the daemon: every change of a budget or of a job's tasks re-arms.
    manager_->setBudgetListener([this] {
      if (auto* e = armed_.load()) e->rearm();
    });
    ASSERT_TRUE(manager_->recover().ok());
  }

  void TearDown() override {
    LimitEnforcer* e = armed_.exchange(nullptr);
    (void)e;
    enforcer_.reset();  // joins its threads: nothing runs on after the test
  }

  void addJob(const JobSetup& j) {
    agent::JobRequestSpec spec;
    spec.job_id = j.id;
    spec.uid = 1000;
    spec.user = "alice";
    spec.appliance_time_sec = j.limit_s;
    spec.appliance_signal = j.signal;
    spec.appliance_signal_lead_sec = j.lead_s;
    spec.node = j.node;
    spec.node_list = j.node_list;
    ASSERT_TRUE(manager_->prolog(spec).ok());
    for (int n = 1; n <= j.tasks; ++n)
      ASSERT_TRUE(manager_->taskStarted(j.id, agent::TaskRef{0, int32_t(j.id * 100 + n), 1}).ok());
    ASSERT_TRUE(manager_->applianceJobSeen(j.id, applianceRun(j.id, j.running_since)).ok());
  }

  static appliance::ApplianceJob applianceRun(uint32_t job, int64_t start, int64_t end = 0) {
    appliance::ApplianceJob run;
    run.id = "wsjob-" + std::to_string(job);
    run.slurm_job_id = job;
    run.state =
        end == 0 ? appliance::ApplianceState::kRunning : appliance::ApplianceState::kSucceeded;
    run.start_ns = start;
    run.end_ns = end;
    return run;
  }

  void startEnforcer() {
    EnforcerActions actions;
    actions.clock = clock_.get();
    actions.signal_job = [this](const agent::JobRecord& rec, agent::LimitAction action, int sig) {
      const auto tasks = tasksToSignal(rec, action);
      const uint32_t job = tasks.empty() ? 0 : uint32_t(tasks.front().pid / 100);
      note(signal(job, sig, int(tasks.size()), clock_->wallNs()));
      return int(tasks.size());
    };
    actions.cancel_appliance = [this](uint32_t job) { note(cancel(job, clock_->wallNs())); };
    actions.emit = [this](const event::Event& e) {
      if (auto* w = std::get_if<event::TimeLimitWarning>(&e))
        note(warning(w->job_id, int(w->remaining_s), clock_->wallNs()));
      if (auto* f = std::get_if<event::TimeLimitEnforced>(&e))
        note(enforced(f->job_id, int(f->used_s), clock_->wallNs()));
    };
    enforcer_ = std::make_unique<LimitEnforcer>(*manager_, kGrace, std::move(actions));
    armed_ = enforcer_.get();
    ASSERT_TRUE(enforcer_->start().ok());
  }

  // Time passes up to `t`; the enforcer is told, as a change would tell it.
  void passTo(int64_t t) {
    clock_->advanceTo(t);
    enforcer_->rearm();
  }

  // Waits until `done` holds of the log; false after a bound no working
  // enforcer comes near (a broken one fails here instead of hanging).
  template <typename Pred>
  bool waitUntil(Pred done) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, std::chrono::seconds(10), [&] { return done(seen_); });
  }
  bool waitFor(const std::string& what, uint32_t job) {
    return waitUntil([&](const std::vector<Seen>& seen) {
      for (const auto& s : seen)
        if (s.what == what && s.job == job) return true;
      return false;
    });
  }
  bool waitForSignal(uint32_t job, int sig) {
    return waitUntil([&](const std::vector<Seen>& seen) {
      for (const auto& s : seen)
        if (s.what == "signal" && s.job == job && s.value == sig) return true;
      return false;
    });
  }

  // What was seen of one job, in order (the jobs' threads interleave).
  std::vector<Seen> seenOf(uint32_t job) {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<Seen> out;
    for (const auto& s : seen_)
      if (s.job == job) out.push_back(s);
    return out;
  }
  std::vector<Seen> seen() {
    std::lock_guard<std::mutex> g(mu_);
    return seen_;
  }

  void note(Seen s) {
    {
      std::lock_guard<std::mutex> g(mu_);
      seen_.push_back(std::move(s));
    }
    cv_.notify_all();
  }

  TempDir dir_{"accel-limit"};
  std::unique_ptr<FakeClock> clock_;
  std::unique_ptr<agent::JobManager> manager_;
  std::unique_ptr<LimitEnforcer> enforcer_;
  std::atomic<LimitEnforcer*> armed_{nullptr};

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Seen> seen_;
};

// The limit reached: SIGTERM to the job's tasks first (on the timer's
// thread), then its appliance jobs cancelled and the event sent (on the
// reporter's), all at the deadline; SIGKILL to what is left after the grace.
TEST_F(LimitEnforcerTest,
       TheLimitSignalsTheTasksThenCancelsTheApplianceJobsThenKillsAfterTheGrace) {
  startManager();
  addJob({.id = 77, .limit_s = 10, .tasks = 2});
  startEnforcer();
  passTo(kT0 + 10 * kSec);
  ASSERT_TRUE(waitFor("enforced", 77));
  EXPECT_EQ(seenOf(77),
            (std::vector<Seen>{signal(77, SIGTERM, 2, kT0 + 10 * kSec), cancel(77, kT0 + 10 * kSec),
                               enforced(77, 10, kT0 + 10 * kSec)}));
  // Recorded (before the event is sent) as taken at the deadline, so that a
  // restart does not take it again.
  EXPECT_EQ(manager_->job(77)->budget.enforced_ns, kT0 + 10 * kSec);

  passTo(kT0 + 10 * kSec + kGrace);
  ASSERT_TRUE(waitForSignal(77, SIGKILL));
  EXPECT_EQ(seenOf(77).back(), signal(77, SIGKILL, 2, kT0 + 10 * kSec + kGrace));
  EXPECT_EQ(seenOf(77).size(), 4u);
}

// --appliance-signal=USR1@5: the signal goes to the job's tasks 5 s before
// the limit, with the event saying how long is left; the limit itself then
// comes as ever.
TEST_F(LimitEnforcerTest, TheAskedSignalComesItsLeadAheadOfTheLimit) {
  startManager();
  addJob({.id = 78, .limit_s = 10, .tasks = 1, .signal = SIGUSR1, .lead_s = 5});
  startEnforcer();
  passTo(kT0 + 5 * kSec);
  ASSERT_TRUE(waitFor("warning", 78));
  EXPECT_EQ(seenOf(78), (std::vector<Seen>{signal(78, SIGUSR1, 1, kT0 + 5 * kSec),
                                           warning(78, 5, kT0 + 5 * kSec)}));
  passTo(kT0 + 10 * kSec);
  ASSERT_TRUE(waitFor("enforced", 78));
  EXPECT_EQ(seenOf(78), (std::vector<Seen>{
                            signal(78, SIGUSR1, 1, kT0 + 5 * kSec), warning(78, 5, kT0 + 5 * kSec),
                            signal(78, SIGTERM, 1, kT0 + 10 * kSec), cancel(78, kT0 + 10 * kSec),
                            enforced(78, 10, kT0 + 10 * kSec)}));
}

// The enforcer's thread wakes a moment after the warning is due, as on a real
// clock: the event still says the lead that was asked, not a second less.
TEST_F(LimitEnforcerTest, AWarningTakenLateSaysTheLeadAsked) {
  startManager();
  addJob({.id = 79, .limit_s = 10, .tasks = 1, .signal = SIGUSR1, .lead_s = 3});
  startEnforcer();
  passTo(kT0 + 7 * kSec + 4'000'000);
  ASSERT_TRUE(waitFor("warning", 79));
  EXPECT_EQ(seenOf(79), (std::vector<Seen>{signal(79, SIGUSR1, 1, kT0 + 7 * kSec + 4'000'000),
                                           warning(79, 3, kT0 + 7 * kSec + 4'000'000)}));
}

// A job whose Slurm job ends (its epilog) before the limit, and one whose
// appliance work ends before it (the job stays, its budget no longer used),
// are left alone when their deadline would have come. Job 90 is the probe:
// its larger id puts it last in the enforcer's pass over the jobs, so once
// it is signalled the others have been looked at in the same pass.
TEST_F(LimitEnforcerTest, AJobThatEndsBeforeItsLimitIsNeitherSignalledNorCancelled) {
  startManager();
  addJob({.id = 80, .limit_s = 10});
  addJob({.id = 81, .limit_s = 10});
  addJob({.id = 90, .limit_s = 20});
  startEnforcer();
  passTo(kT0 + 6 * kSec);
  ASSERT_TRUE(manager_->applianceJobSeen(80, applianceRun(80, kT0, kT0 + 6 * kSec)).ok());
  ASSERT_TRUE(manager_->epilog(81).ok());
  passTo(kT0 + 20 * kSec);
  ASSERT_TRUE(waitFor("enforced", 90));
  EXPECT_TRUE(seenOf(80).empty());
  EXPECT_TRUE(seenOf(81).empty());
  EXPECT_EQ(seenOf(90),
            (std::vector<Seen>{signal(90, SIGTERM, 1, kT0 + 20 * kSec), cancel(90, kT0 + 20 * kSec),
                               enforced(90, 20, kT0 + 20 * kSec)}));
  EXPECT_EQ(agent::usedNs(manager_->job(80)->budget, clock_->wallNs()), 6 * kSec);
}

// The enforcer keeps time by `now` alone (the daemon's job clock) and arms
// its timer relative to it on CLOCK_BOOTTIME, so a step of the system's wall
// clock bends no deadline (limit_enforcer.h, job_clock.h). After a step the
// job clock and CLOCK_REALTIME disagree by the step: here by a day either
// way, the job clock ahead (the wall clock was set back) and behind (set
// forward). Job 91 is overdue from the start and is acted on at once; its
// larger id puts job 79 in the same pass, which must find 79 not due.
class LimitEnforcerStepTest : public LimitEnforcerTest,
                              public ::testing::WithParamInterface<int64_t> {};

TEST_P(LimitEnforcerStepTest, ADeadlineFallsWhenTheJobClockReachesItWhereverTheWallClockIs) {
  const int64_t t0 = wallNs() + GetParam();
  startManager(t0);
  addJob({.id = 79, .limit_s = 10, .running_since = t0});
  addJob({.id = 91, .limit_s = 10, .running_since = t0 - 60 * kSec});
  startEnforcer();
  ASSERT_TRUE(waitFor("enforced", 91));
  EXPECT_EQ(seenOf(91).front(), signal(91, SIGTERM, 1, t0));
  EXPECT_TRUE(seenOf(79).empty()) << "acted on at the start, 10 s early";
  passTo(t0 + 10 * kSec);
  ASSERT_TRUE(waitFor("enforced", 79));
  EXPECT_EQ(seenOf(79),
            (std::vector<Seen>{signal(79, SIGTERM, 1, t0 + 10 * kSec), cancel(79, t0 + 10 * kSec),
                               enforced(79, 10, t0 + 10 * kSec)}));
}

INSTANTIATE_TEST_SUITE_P(WallClockSteppedBackOrForward, LimitEnforcerStepTest,
                         ::testing::Values(+86400 * kSec, -86400 * kSec));

// Several jobs at once, with their own limits, warnings and tasks: each is
// acted on at its own deadline only, those that share one all at it; one on
// which this node follows stops its tasks and leaves the cancel to its
// leader. Job 86, due with 82, has the largest id: once it is signalled, the
// pass over the jobs has looked at 83 to 85 too.
TEST_F(LimitEnforcerTest, SeveralJobsAreEachActedOnAtTheirOwnDeadline) {
  startManager();
  addJob({.id = 82, .limit_s = 10, .tasks = 1, .signal = SIGUSR2, .lead_s = 3});
  addJob({.id = 83, .limit_s = 20, .tasks = 2});
  addJob({.id = 85, .limit_s = 20, .tasks = 1, .node = "n2", .node_list = "n[1-2]"});
  addJob({.id = 86, .limit_s = 10, .tasks = 1});
  startEnforcer();
  passTo(kT0 + 5 * kSec);
  addJob({.id = 84, .limit_s = 15, .running_since = kT0 + 5 * kSec, .tasks = 3});
  passTo(kT0 + 7 * kSec);
  ASSERT_TRUE(waitFor("warning", 82));
  passTo(kT0 + 10 * kSec);
  ASSERT_TRUE(waitFor("enforced", 82));
  ASSERT_TRUE(waitFor("enforced", 86));
  EXPECT_TRUE(seenOf(83).empty());
  EXPECT_TRUE(seenOf(84).empty());
  EXPECT_TRUE(seenOf(85).empty());
  passTo(kT0 + 20 * kSec);
  ASSERT_TRUE(waitFor("enforced", 83));
  ASSERT_TRUE(waitFor("enforced", 84));
  ASSERT_TRUE(waitFor("enforced", 85));
  const int64_t t10 = kT0 + 10 * kSec, t20 = kT0 + 20 * kSec;
  EXPECT_EQ(seenOf(82), (std::vector<Seen>{
                            signal(82, SIGUSR2, 1, kT0 + 7 * kSec), warning(82, 3, kT0 + 7 * kSec),
                            signal(82, SIGTERM, 1, t10), cancel(82, t10), enforced(82, 10, t10)}));
  EXPECT_EQ(seenOf(83), (std::vector<Seen>{signal(83, SIGTERM, 2, t20), cancel(83, t20),
                                           enforced(83, 20, t20)}));
  EXPECT_EQ(seenOf(84), (std::vector<Seen>{signal(84, SIGTERM, 3, t20), cancel(84, t20),
                                           enforced(84, 15, t20)}));
  EXPECT_EQ(seenOf(85), (std::vector<Seen>{signal(85, SIGTERM, 1, t20), enforced(85, 20, t20)}));
  EXPECT_EQ(seenOf(86), (std::vector<Seen>{signal(86, SIGTERM, 1, t10), cancel(86, t10),
                                           enforced(86, 10, t10)}));
  EXPECT_EQ(seen().size(), 16u);
}

// Appliance limits on a job that spans nodes: every node reads the same
// appliance and so reaches the limit at the same moment; each stops its own
// tasks, and only the job's leader cancels the appliance jobs. The limit
// (10 s) was used up while the daemon was down (60 s ran): acted on at start.
TEST_F(LimitEnforcerTest, TheLeaderStopsItsTasksAndCancelsTheApplianceJobs) {
  startManager();
  addJob({.id = 77,
          .limit_s = 10,
          .running_since = kT0 - 60 * kSec,
          .node = "sbn1",
          .node_list = "sbn[1-2]"});
  startEnforcer();
  ASSERT_TRUE(waitFor("enforced", 77));
  EXPECT_EQ(seenOf(77), (std::vector<Seen>{signal(77, SIGTERM, 1, kT0), cancel(77, kT0),
                                           enforced(77, 60, kT0)}));
}

TEST_F(LimitEnforcerTest, AFollowerStopsItsOwnTasksAndLeavesTheCancelToTheLeader) {
  startManager();
  addJob({.id = 77,
          .limit_s = 10,
          .running_since = kT0 - 60 * kSec,
          .node = "sbn2",
          .node_list = "sbn[1-2]"});
  startEnforcer();
  ASSERT_TRUE(waitFor("enforced", 77));
  EXPECT_EQ(seenOf(77), (std::vector<Seen>{signal(77, SIGTERM, 1, kT0), enforced(77, 60, kT0)}));
}

// The waiters of surrogate steps are spared the warning and SIGTERM, at most
// kMaxSurrogateStepsPerJob of them; SIGKILL reaches every task.
TEST(LimitEnforcerSignals, SparedStepsAreCappedAndKillSparesNone) {
  agent::JobRecord rec;
  rec.spec.job_id = 5;
  rec.tasks = {{.step_id = 0, .pid = 10, .start_ticks = 1},
               {.step_id = 1, .pid = 11, .start_ticks = 1},
               {.step_id = 1000, .pid = 12, .start_ticks = 1}};
  rec.surrogate_steps = {1};
  auto pids = [](const std::vector<agent::TaskRef>& tasks) {
    std::vector<int32_t> out;
    for (const auto& t : tasks) out.push_back(t.pid);
    return out;
  };
  EXPECT_EQ(pids(tasksToSignal(rec, agent::LimitAction::kWarn)), (std::vector<int32_t>{10, 12}));
  EXPECT_EQ(pids(tasksToSignal(rec, agent::LimitAction::kEnforce)), (std::vector<int32_t>{10, 12}));
  EXPECT_EQ(pids(tasksToSignal(rec, agent::LimitAction::kKill)),
            (std::vector<int32_t>{10, 11, 12}));
  // Past the cap, a reported step is signalled like any other.
  for (uint32_t s = 2; s < 2 + agent::kMaxSurrogateStepsPerJob; ++s)
    rec.surrogate_steps.push_back(s);
  rec.surrogate_steps.push_back(1000);
  EXPECT_EQ(pids(tasksToSignal(rec, agent::LimitAction::kEnforce)), (std::vector<int32_t>{10, 12}));
}

// As sbatch --signal: the warning goes to the steps' tasks and not to the
// batch shell, or with B: to the batch shell alone; SIGTERM and SIGKILL go to
// both. A surrogate step's waiter stays spared either way.
TEST(LimitEnforcerSignals, TheWarningGoesToTheStepsOrWithBToTheBatchShellOnly) {
  agent::JobRecord rec;
  rec.spec.job_id = 6;
  rec.tasks = {{.step_id = agent::kBatchStepId, .pid = 20, .start_ticks = 1},
               {.step_id = 0, .pid = 21, .start_ticks = 1},
               {.step_id = 0, .pid = 22, .start_ticks = 1},
               {.step_id = 1, .pid = 23, .start_ticks = 1}};
  rec.surrogate_steps = {1};
  auto pids = [](const std::vector<agent::TaskRef>& tasks) {
    std::vector<int32_t> out;
    for (const auto& t : tasks) out.push_back(t.pid);
    return out;
  };
  EXPECT_EQ(pids(tasksToSignal(rec, agent::LimitAction::kWarn)), (std::vector<int32_t>{21, 22}));
  EXPECT_EQ(pids(tasksToSignal(rec, agent::LimitAction::kEnforce)),
            (std::vector<int32_t>{20, 21, 22}));
  rec.spec.appliance_signal_batch = true;
  EXPECT_EQ(pids(tasksToSignal(rec, agent::LimitAction::kWarn)), (std::vector<int32_t>{20}));
  EXPECT_EQ(pids(tasksToSignal(rec, agent::LimitAction::kEnforce)),
            (std::vector<int32_t>{20, 21, 22}));
  EXPECT_EQ(pids(tasksToSignal(rec, agent::LimitAction::kKill)),
            (std::vector<int32_t>{20, 21, 22, 23}));
}

}  // namespace
}  // namespace accel::agentd
