// Appliance limits on a job that spans nodes: every node reads the same
// appliance and so reaches the limit at the same moment; each stops its own
// tasks, and only the job's leader cancels the appliance jobs.
#include "accel/agentd/limit_enforcer.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <condition_variable>
#include <mutex>

#include "accel/common/safe_file.h"

namespace accel::agentd {
namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kNow = 1'800'000'000 * kSec;

struct Seen {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> signals;  // one per signal_tasks call
  int tasks_reached = 0;
  std::vector<uint32_t> cancels;
  bool enforced = false;
};

// The limit of job 77 (10 s of appliance time, 60 s used) reached on `node`.
void reachLimitOn(const std::string& node, const std::string& dir, Seen& seen) {
  agent::JobManager m(agent::JobStore(dir + "/state"), agent::Inventory{}, {}, [] { return kNow; });
  ASSERT_TRUE(m.recover().ok());
  agent::JobRequestSpec spec;
  spec.job_id = 77;
  spec.uid = 1000;
  spec.user = "alice";
  spec.appliance_time_sec = 10;
  spec.node = node;
  spec.node_list = "sbn[1-2]";
  spec.node_count = 2;
  ASSERT_TRUE(m.prolog(spec).ok());
  ASSERT_TRUE(m.taskStarted(77, agent::TaskRef{0, 4242, 1}).ok());
  appliance::ApplianceJob run;
  run.id = "wsjob-vpd7iavtknrtvgonhe7mog";
  run.slurm_job_id = 77;
  run.state = appliance::ApplianceState::kRunning;
  run.start_ns = kNow - 60 * kSec;
  ASSERT_TRUE(m.applianceJobSeen(77, run).ok());

  EnforcerActions actions;
  actions.now = [] { return kNow; };
  actions.signal_tasks = [&seen](const std::vector<agent::TaskRef>& tasks, int sig) {
    std::lock_guard<std::mutex> g(seen.mu);
    seen.signals.push_back(sig);
    seen.tasks_reached += static_cast<int>(tasks.size());
    return static_cast<int>(tasks.size());
  };
  actions.cancel_appliance = [&seen](uint32_t job_id) {
    std::lock_guard<std::mutex> g(seen.mu);
    seen.cancels.push_back(job_id);
  };
  actions.emit = [&seen](const event::Event& e) {
    if (!std::holds_alternative<event::TimeLimitEnforced>(e)) return;
    std::lock_guard<std::mutex> g(seen.mu);
    seen.enforced = true;
    seen.cv.notify_all();
  };
  LimitEnforcer enforcer(m, 30 * kSec, std::move(actions));
  ASSERT_TRUE(enforcer.start().ok());
  std::unique_lock<std::mutex> lk(seen.mu);
  ASSERT_TRUE(seen.cv.wait_for(lk, std::chrono::seconds(10), [&] { return seen.enforced; }));
}

class LimitEnforcerNodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/accel-limit-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { ASSERT_TRUE(removeTree(root_).ok()); }
  std::string root_;
};

TEST_F(LimitEnforcerNodesTest, TheLeaderStopsItsTasksAndCancelsTheApplianceJobs) {
  Seen seen;
  reachLimitOn("sbn1", root_, seen);
  std::lock_guard<std::mutex> g(seen.mu);
  EXPECT_EQ(seen.signals, std::vector<int>{SIGTERM});
  EXPECT_EQ(seen.tasks_reached, 1);
  EXPECT_EQ(seen.cancels, std::vector<uint32_t>{77});
}

TEST_F(LimitEnforcerNodesTest, AFollowerStopsItsOwnTasksAndLeavesTheCancelToTheLeader) {
  Seen seen;
  reachLimitOn("sbn2", root_, seen);
  std::lock_guard<std::mutex> g(seen.mu);
  EXPECT_EQ(seen.signals, std::vector<int>{SIGTERM});
  EXPECT_EQ(seen.tasks_reached, 1);
  EXPECT_TRUE(seen.cancels.empty());
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
