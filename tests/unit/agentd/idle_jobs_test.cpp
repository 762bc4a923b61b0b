// IdleJobs: what the daemon does about a job the idle decision found idle,
// with a fake utilization source and recorded actions: the line, the cancel
// (bounded retries, never more), the job_idle event saying what was done,
// each once per job; off with IdleAfter 0; the policy changed on reload.
#include "accel/agentd/idle_jobs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace accel::agentd {
namespace {

using Action = AccelConfig::IdleAction;
using std::chrono::milliseconds;
using std::chrono::seconds;

class FakeSource : public agent::UtilizationSource {
 public:
  std::vector<agent::JobIdleness> jobs;
  std::vector<agent::JobIdleness> idleness() const override { return jobs; }
  milliseconds sampleInterval() const override { return milliseconds(1000); }
};

struct Recorded {
  std::vector<std::pair<uint32_t, std::string>> lines;
  std::vector<bool> to_sruns;
  std::map<uint32_t, int> cancels;
  std::vector<event::JobIdle> events;
  bool has_file = true;
  int cancel_failures = 0;  // the first this many cancels fail
};

IdleActions actionsFor(Recorded& r) {
  IdleActions a;
  a.node = "g1";
  a.retry_wait = milliseconds(1);
  a.tell_job = [&r](uint32_t job, const std::string& line, bool to_sruns) -> Result<bool> {
    r.lines.emplace_back(job, line);
    r.to_sruns.push_back(to_sruns);
    return r.has_file;
  };
  a.cancel = [&r](uint32_t job) -> Status {
    ++r.cancels[job];
    if (r.cancel_failures-- > 0) return Error(ErrorCode::kUnavailable, "slurmctld away");
    return okStatus();
  };
  a.emit = [&r](const event::Event& e) { r.events.push_back(std::get<event::JobIdle>(e)); };
  return a;
}

TEST(IdleJobs, AnIdleJobIsToldOnceAndItsEventSaysWhatWasDone) {
  FakeSource source;
  Recorded r;
  IdleJobs idle(source, IdlePolicy{seconds(3), Action::kNotify}, actionsFor(r));
  source.jobs = {{42, 2, {1}}, {43, 0, {0}}};
  EXPECT_TRUE(idle.checkOnce().empty()) << "2 s idle of 3";
  source.jobs = {{42, 3, {1}}, {43, 0, {0}}};
  ASSERT_EQ(idle.checkOnce().size(), 1u);
  source.jobs = {{42, 9, {1}}, {43, 0, {0}}};
  EXPECT_TRUE(idle.checkOnce().empty()) << "once per job";
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0].first, 42u);
  EXPECT_EQ(r.lines[0].second,
            "accel: job 42: GPU 1 on g1 read 0% utilization for 3 s (idle accelerators); if the "
            "job does not need them, end it or ask for fewer, so others can use them");
  EXPECT_EQ(r.to_sruns, std::vector<bool>{true}) << "notify: its sruns are told too";
  EXPECT_TRUE(r.cancels.empty());
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0], (event::JobIdle{42, 3, {1}, event::IdleAction::kNotify, true}));
}

TEST(IdleJobs, NoneStillWritesTheLineAndTheEventButCancelsNothing) {
  FakeSource source;
  Recorded r;
  r.has_file = false;  // an interactive job: the journal and the event carry it
  IdleJobs idle(source, IdlePolicy{seconds(1), Action::kNone}, actionsFor(r));
  source.jobs = {{7, 1, {0, 2}}};
  idle.checkOnce();
  EXPECT_EQ(r.to_sruns, std::vector<bool>{false});
  EXPECT_TRUE(r.cancels.empty());
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0], (event::JobIdle{7, 1, {0, 2}, event::IdleAction::kNone, false}));
}

TEST(IdleJobs, CancelIsTriedAtMostThreeTimesAndAFailureIsSaid) {
  FakeSource source;
  Recorded r;
  r.cancel_failures = 2;  // the third try goes through
  IdleJobs idle(source, IdlePolicy{seconds(2), Action::kCancel}, actionsFor(r));
  source.jobs = {{42, 2, {0}}};
  idle.checkOnce();
  EXPECT_EQ(r.cancels[42], 3);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].action, event::IdleAction::kCancel);
  EXPECT_NE(r.lines.at(0).second.find("the job is cancelled now"), std::string::npos)
      << r.lines.at(0).second;

  r.cancel_failures = 100;  // slurmctld refuses for good
  source.jobs = {{42, 3, {0}}, {44, 2, {1}}};
  idle.checkOnce();
  EXPECT_EQ(r.cancels[44], IdleJobs::kCancelTries) << "bounded";
  EXPECT_EQ(r.cancels[42], 3) << "job 42 was done with";
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[1].action, event::IdleAction::kCancelFailed);
  source.jobs = {{44, 9, {1}}};
  idle.checkOnce();
  EXPECT_EQ(r.cancels[44], IdleJobs::kCancelTries) << "never tried again for the same job";
}

TEST(IdleJobs, ZeroIsOffAndAReloadTurnsItOn) {
  FakeSource source;
  Recorded r;
  IdleJobs idle(source, IdlePolicy{seconds(0), Action::kCancel}, actionsFor(r));
  source.jobs = {{42, 1000, {0}}};
  EXPECT_TRUE(idle.checkOnce().empty());
  EXPECT_TRUE(r.events.empty());
  idle.setPolicy(IdlePolicy{seconds(60), Action::kNone});
  EXPECT_EQ(idle.checkOnce().size(), 1u);
  EXPECT_TRUE(r.cancels.empty());
}

TEST(IdleJobs, TheThreadChecksAndStops) {
  FakeSource source;
  source.jobs = {{42, 5, {0}}};
  std::atomic<int> emitted{0};
  IdleActions a;
  a.emit = [&emitted](const event::Event&) { ++emitted; };
  IdleJobs idle(source, IdlePolicy{seconds(1), Action::kNone}, std::move(a));
  idle.start();
  for (int i = 0; i < 300 && emitted == 0; ++i) {
    idle.setPolicy(IdlePolicy{seconds(1), Action::kNone});  // wakes it for a check at once
    std::this_thread::sleep_for(milliseconds(10));
  }
  idle.stop();
  EXPECT_EQ(emitted, 1);
}

TEST(IdlePolicy, FromTheConfig) {
  AccelConfig c;
  c.idle_after = SlurmDuration::fromSeconds(1800);
  c.idle_action = Action::kCancel;
  EXPECT_EQ(idlePolicyOf(c), (IdlePolicy{seconds(1800), Action::kCancel}));
  c.idle_after = SlurmDuration::unlimited();
  EXPECT_EQ(idlePolicyOf(c).after, seconds(0)) << "UNLIMITED: off";
}

}  // namespace
}  // namespace accel::agentd
