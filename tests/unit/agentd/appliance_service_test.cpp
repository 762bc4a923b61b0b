// The daemon's appliance subsystem on a FakeAppliance and a FakeClock: the
// watcher follows a ready job's appliance work and streams it, the limit
// cancels only the job's own appliance jobs (on a cancel thread of the job's),
// one job's hung cancel holds up no other, a process that outlives SIGKILL is
// a node fault, and stop() leaves no thread of the service behind.
#include "accel/agentd/appliance_service.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accel/common/proc_stat.h"
#include "fake_appliance.h"
#include "fake_clock.h"
#include "temp_dir.h"

namespace accel::agentd {
namespace {

using support::FakeClock;
using support::TempDir;

constexpr int64_t kSec = FakeClock::kSec;
constexpr int64_t kT0 = FakeClock::kDefaultWallNs;

// Threads of this process, from /proc/self/task.
int threadCount() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

appliance::ApplianceJob run(const std::string& id, uint32_t job, int uid, const std::string& user,
                            int64_t start) {
  appliance::ApplianceJob j;
  j.id = id;
  j.slurm_job_id = job;
  j.uid = uid;
  j.user = user;
  j.state = appliance::ApplianceState::kRunning;
  j.systems = 1;
  j.start_ns = start;
  return j;
}

class ApplianceServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A sanitizer's runtime may start a thread of its own with the first
    // thread made: made here, it is counted before as after.
    std::thread([] {}).join();
    threads_before_ = threadCount();
    manager_ =
        std::make_unique<agent::JobManager>(agent::JobStore(dir_.file("state")), agent::Inventory{},
                                            std::vector<std::unique_ptr<agent::JobStep>>{}, clock_);
    ASSERT_TRUE(manager_->recover().ok());
    manager_->setBudgetListener([this] {
      if (service_) service_->rearmLimits();
    });
  }

  void TearDown() override {
    service_.reset();
    manager_.reset();
  }

  // A job ready on this node, the leader of its one-node list, with an
  // appliance limit of `limit_s`.
  void addJob(uint32_t id, int64_t limit_s, uint32_t uid = 1000) {
    agent::JobRequestSpec spec;
    spec.job_id = id;
    spec.uid = uid;
    spec.user = "alice";
    spec.appliance_time_sec = limit_s;
    spec.node = "n1";
    spec.node_list = "n1";
    ASSERT_TRUE(manager_->prolog(spec).ok());
  }

  void startService(std::shared_ptr<appliance::FakeAppliance> client,
                    ApplianceService::Options o = {}) {
    o.poll_interval = std::chrono::milliseconds(20);
    if (o.kill_grace_ns == 0) o.kill_grace_ns = 30 * kSec;
    o.clock = &clock_;
    service_ = std::make_unique<ApplianceService>(
        *manager_, std::move(client), metrics_,
        [this](const event::Event& e) {
          {
            std::lock_guard<std::mutex> g(mu_);
            events_.push_back(e);
          }
          cv_.notify_all();
        },
        o);
    ASSERT_TRUE(service_->start().ok());
  }

  template <typename Pred>
  bool waitUntil(Pred done) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, std::chrono::seconds(10), [&] { return done(events_); });
  }

  // For what happens on the service's cancel thread, which tells nobody:
  // looked at every 10 ms, for at most 10 s.
  template <typename Pred>
  static bool eventually(Pred done) {
    for (int i = 0; i < 1000; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  }

  static bool cancelledOnly(appliance::FakeAppliance& fake, const std::vector<std::string>& ids) {
    std::lock_guard<std::mutex> g(fake.mu);
    return fake.cancelled == ids;
  }

  TempDir dir_{"accel-appliance-service"};
  FakeClock clock_;
  AgentMetrics metrics_;
  std::unique_ptr<agent::JobManager> manager_;
  std::unique_ptr<ApplianceService> service_;
  int threads_before_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<event::Event> events_;
};

TEST_F(ApplianceServiceTest, WithoutAnApplianceOnlyTheLimitsRun) {
  startService(nullptr);
  EXPECT_FALSE(service_->hasAppliance());
  EXPECT_TRUE(service_->jobsOf(7).empty());
  EXPECT_EQ(service_->secondsOf(7), 0.0);
  service_->jobsChanged();  // nothing to poke; must not fail
  service_->stop();
  EXPECT_EQ(threadCount(), threads_before_);
}

TEST_F(ApplianceServiceTest, FollowsAReadyJobsApplianceWorkAndStreamsIt) {
  auto fake = std::make_shared<appliance::FakeAppliance>();
  fake->list = {run("wsjob-a", 7, 1000, "alice", kT0)};
  addJob(7, 0);
  startService(fake);
  service_->jobsChanged();
  ASSERT_TRUE(waitUntil([](const std::vector<event::Event>& seen) {
    return std::any_of(seen.begin(), seen.end(), [](const event::Event& e) {
      const auto* c = std::get_if<event::ApplianceJobChanged>(&e);
      return c && c->job_id == 7 && c->appliance_job == "wsjob-a";
    });
  })) << "the watcher never reported the job's appliance job";
  auto followed = service_->jobsOf(7);
  ASSERT_EQ(followed.size(), 1u);
  EXPECT_EQ(followed[0].id, "wsjob-a");
}

// At the limit the job's own appliance job is cancelled; another user's
// entry that carries the same Slurm job label is not.
TEST_F(ApplianceServiceTest, TheLimitCancelsOnlyTheJobsOwnApplianceJobs) {
  auto fake = std::make_shared<appliance::FakeAppliance>();
  fake->list = {run("wsjob-own", 7, 1000, "alice", kT0),
                run("wsjob-other", 7, 1001, "mallory", kT0)};
  addJob(7, 10);
  ASSERT_TRUE(manager_->applianceJobSeen(7, fake->list[0]).ok());
  startService(fake);
  clock_.advanceTo(kT0 + 11 * kSec);
  service_->rearmLimits();
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> g(fake->mu);
    return !fake->cancelled.empty();
  })) << "nothing was cancelled at the limit";
  // The cancel thread has run its one cancel; stop() joins it.
  service_->stop();
  EXPECT_TRUE(cancelledOnly(*fake, {"wsjob-own"}));
  EXPECT_EQ(metrics_.limit_enforcements.value(), 1u);
}

// An appliance whose cancel of one job hangs until the test lets it go.
class HangingCancel : public appliance::FakeAppliance {
 public:
  explicit HangingCancel(std::string hangs) : hangs_(std::move(hangs)) {}
  Status cancel(const std::string& id) override {
    if (id == hangs_) {
      std::unique_lock<std::mutex> lk(hang_mu_);
      hanging_ = true;
      hang_cv_.wait(lk, [this] { return released_; });
    }
    return FakeAppliance::cancel(id);
  }
  bool hanging() {
    std::lock_guard<std::mutex> g(hang_mu_);
    return hanging_;
  }
  void release() {
    {
      std::lock_guard<std::mutex> g(hang_mu_);
      released_ = true;
    }
    hang_cv_.notify_all();
  }

 private:
  std::string hangs_;
  std::mutex hang_mu_;
  std::condition_variable hang_cv_;
  bool hanging_ = false;
  bool released_ = false;
};

// Two jobs reach their limits together and the first one's cancel hangs:
// the second's appliance job is cancelled all the same.
TEST_F(ApplianceServiceTest, OneJobsHungCancelHoldsUpNoOther) {
  auto fake = std::make_shared<HangingCancel>("wsjob-seven");
  fake->list = {run("wsjob-seven", 7, 1000, "alice", kT0),
                run("wsjob-eight", 8, 1000, "alice", kT0)};
  addJob(7, 10);
  addJob(8, 12);
  ASSERT_TRUE(manager_->applianceJobSeen(7, fake->list[0]).ok());
  ASSERT_TRUE(manager_->applianceJobSeen(8, fake->list[1]).ok());
  startService(fake);
  clock_.advanceTo(kT0 + 11 * kSec);  // job 7's limit
  service_->rearmLimits();
  ASSERT_TRUE(eventually([&] { return fake->hanging(); })) << "job 7's cancel never started";
  clock_.advanceTo(kT0 + 13 * kSec);  // job 8's limit, job 7's cancel still hanging
  service_->rearmLimits();
  const bool eight_cancelled = eventually([&] {
    std::lock_guard<std::mutex> g(fake->mu);
    return fake->cancelled == std::vector<std::string>{"wsjob-eight"};
  });
  fake->release();
  service_->stop();
  EXPECT_TRUE(eight_cancelled) << "job 8's cancel waited for job 7's";
  EXPECT_TRUE(cancelledOnly(*fake, {"wsjob-eight", "wsjob-seven"}));
}

// A process of the job's step still there after SIGKILL (stuck in the
// kernel: here, a /proc entry that stays) is the node's fault: the node is
// reported for draining, with the job and the process named. The job's
// cgroup is Slurm's v1 layout in plain files, under a freezer mount that a
// /proc of copies lists; the process is a real child of the test.
TEST_F(ApplianceServiceTest, AProcessThatOutlivesSigkillIsANodeFault) {
  namespace fs = std::filesystem;
  const uint32_t uid = getuid();
  const std::string proc = dir_.file("proc"), cg = dir_.file("cg");
  const std::string step = cg + "/slurm_n1/uid_" + std::to_string(uid) + "/job_7/step_batch";
  fs::create_directories(step);
  fs::create_directories(proc + "/self");
  std::ofstream(proc + "/self/mountinfo")
      << "30 25 0:27 / " << cg << " rw,relatime - cgroup cgroup rw,freezer\n";
  pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  const std::string pd = proc + "/" + std::to_string(child);
  fs::create_directories(pd);
  for (const char* f : {"stat", "status"}) {
    std::ifstream in("/proc/" + std::to_string(child) + "/" + f);
    std::ofstream(pd + "/" + f) << in.rdbuf();
  }
  std::ofstream(pd + "/cgroup") << "6:freezer:/slurm_n1/uid_" << uid << "/job_7/step_batch\n";
  std::ofstream(step + "/cgroup.procs") << child << "\n";

  auto fake = std::make_shared<appliance::FakeAppliance>();
  fake->list = {run("wsjob-a", 7, int(uid), "alice", kT0)};
  addJob(7, 10, uid);
  ASSERT_TRUE(manager_->applianceJobSeen(7, fake->list[0]).ok());
  ASSERT_TRUE(
      manager_
          ->taskStarted(7, agent::TaskRef{agent::kBatchStepId, child, *readStartTicks(child, proc)})
          .ok());
  std::mutex fault_mu;
  std::vector<std::string> faults;
  ApplianceService::Options o;
  o.kill_grace_ns = 1 * kSec;
  o.proc_root = proc;
  o.unkillable_after = std::chrono::milliseconds(100);
  o.node_fault = [&](uint32_t job, const std::string& node, const std::string& reason) {
    std::lock_guard<std::mutex> g(fault_mu);
    faults.push_back(std::to_string(job) + " " + node + " " + reason);
  };
  std::string tracking;
  o.tracking_changed = [&](const std::string& how) {
    std::lock_guard<std::mutex> g(fault_mu);
    tracking = how;
  };
  startService(fake, o);
  clock_.advanceTo(kT0 + 11 * kSec);  // the limit: SIGTERM, which ends the child
  service_->rearmLimits();
  int st = 0;
  ASSERT_TRUE(eventually([&] { return waitpid(child, &st, WNOHANG) == child; }))
      << "SIGTERM never reached the process in the job's cgroup";
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
  clock_.advanceTo(kT0 + 13 * kSec);  // the grace is over: SIGKILL; the copy of its entry stays
  service_->rearmLimits();
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> g(fault_mu);
    return !faults.empty();
  })) << "no node fault for a process left after SIGKILL";
  service_->stop();
  std::lock_guard<std::mutex> g(fault_mu);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].rfind("7 n1 accel: job 7: 1 process(es) outlived SIGKILL", 0), 0u)
      << faults[0];
  EXPECT_NE(faults[0].find(std::to_string(child)), std::string::npos) << faults[0];
  EXPECT_NE(tracking.find("cgroup v1"), std::string::npos) << tracking;
}

// stop() joins the watcher, the enforcer's threads and the cancel threads:
// none is left running, and stopping twice is harmless.
TEST_F(ApplianceServiceTest, StopLeavesNoThreadBehind) {
  auto fake = std::make_shared<appliance::FakeAppliance>();
  addJob(7, 10);
  startService(fake);
  EXPECT_GT(threadCount(), threads_before_);
  service_->stop();
  EXPECT_EQ(threadCount(), threads_before_);
  service_->stop();
  EXPECT_EQ(threadCount(), threads_before_);
}

}  // namespace
}  // namespace accel::agentd
