#include "accel/agent/job_manager.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "accel/agent/env_file_step.h"
#include "accel/agent/job_dir_step.h"
#include "accel/common/safe_file.h"
#include "fake_clock.h"
#include "temp_dir.h"

namespace accel::agent {
namespace {

// A per-job resource that lives in a shared set: set up adds the job, tear
// down removes it. It can be told to fail, to see rollbacks happen.
struct FakeResource {
  std::mutex mu;
  std::set<uint32_t> present;
  std::map<uint32_t, uid_t> dir_owner_in_setup;  // the job directory's owner as a step saw it
  std::atomic<int> fail_setup_for{-1};
  std::atomic<int> fail_teardown_for{-1};
};

class FakeStep : public JobStep {
 public:
  explicit FakeStep(FakeResource* r) : r_(r) {}
  std::string_view name() const override { return "fake"; }
  Status setUp(JobRecord& job) override {
    if (r_->fail_setup_for == static_cast<int>(job.spec.job_id))
      return Error(ErrorCode::kUnavailable, "controller unreachable");
    std::lock_guard<std::mutex> g(r_->mu);
    r_->present.insert(job.spec.job_id);
    struct stat st {};
    if (!job.job_dir.empty() && lstat(job.job_dir.c_str(), &st) == 0)
      r_->dir_owner_in_setup[job.spec.job_id] = st.st_uid;
    return okStatus();
  }
  Status tearDown(const JobRecord& job) override {
    if (r_->fail_teardown_for == static_cast<int>(job.spec.job_id))
      return Error(ErrorCode::kUnavailable, "controller unreachable");
    std::lock_guard<std::mutex> g(r_->mu);
    r_->present.erase(job.spec.job_id);
    return okStatus();
  }

 private:
  FakeResource* r_;
};

Inventory fourGpus() {
  Inventory inv;
  for (uint32_t i = 0; i < 4; ++i) {
    InventoryDevice d;
    d.slot = {i, "gpu", i};
    d.name = "cuda" + std::to_string(i);
    d.pci_bus_id = "0000:0" + std::to_string(i) + ":00.0";
    d.nearest_nics = {i < 2 ? "ib0" : "ib1"};
    inv.devices.push_back(d);
  }
  inv.device_distance.assign(4, std::vector<int>(4, 2));
  inv.nic_distance.assign(4, 0);
  inv.source = "test";
  return inv;
}

class JobManagerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(makeDirectory(root_ + "/jobs", 0755).ok()); }
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }

  std::unique_ptr<JobManager> make() {
    std::vector<std::unique_ptr<JobStep>> steps;
    steps.push_back(std::make_unique<JobDirStep>(root_ + "/jobs"));
    steps.push_back(std::make_unique<FakeStep>(&res_));
    steps.push_back(std::make_unique<EnvFileStep>());
    steps.push_back(std::make_unique<JobDirHandOver>());
    auto m = std::make_unique<JobManager>(JobStore(root_ + "/state"), fourGpus(), std::move(steps),
                                          clock_);
    auto r = m->recover();
    EXPECT_TRUE(r.ok());
    if (r.ok()) last_recovery_ = *r;
    return m;
  }

  static JobRequestSpec spec(uint32_t id, std::string gpus = "") {
    JobRequestSpec s;
    s.job_id = id;
    s.uid = 4242;
    s.gid = 4343;
    s.user = "alice";
    s.gpus = std::move(gpus);
    return s;
  }

  bool exists(const std::string& p) {
    struct stat st {};
    return lstat(p.c_str(), &st) == 0;
  }

  support::TempDir tmp_{"accel-mgr"};
  std::string root_ = tmp_.path();
  support::FakeClock clock_{1000};  // the job manager's, which never moves
  FakeResource res_;
  RecoverySummary last_recovery_;
};

TEST_F(JobManagerTest, TasksLearnTheApplianceLimitAndWarningSignal) {
  auto m = make();
  auto req = spec(43, "");
  req.appliance_time_sec = 600;
  req.appliance_signal = 10;
  req.appliance_signal_lead_sec = 30;
  auto r = m->prolog(req);
  ASSERT_TRUE(r.ok()) << r.error().message();
  std::map<std::string, std::string> env(r->env.begin(), r->env.end());
  EXPECT_EQ(env["ACCEL_APPLIANCE_TIME_LIMIT"], "600");
  EXPECT_EQ(env["ACCEL_APPLIANCE_SIGNAL"], "10@30");
  ASSERT_TRUE(m->epilog(43).ok());

  req = spec(44, "");
  req.appliance_time_sec = 600;
  req.appliance_signal = 12;
  req.appliance_signal_lead_sec = 90;
  req.appliance_signal_batch = true;
  r = m->prolog(req);
  ASSERT_TRUE(r.ok()) << r.error().message();
  env = {r->env.begin(), r->env.end()};
  EXPECT_EQ(env["ACCEL_APPLIANCE_SIGNAL"], "B:12@90") << "written as the option is";
  ASSERT_TRUE(m->epilog(44).ok());
}

TEST_F(JobManagerTest, PrologMakesEverythingAndEpilogRemovesIt) {
  auto m = make();
  auto r = m->prolog(spec(42, "1,3"));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->phase, JobPhase::kReady);
  EXPECT_EQ(r->devices, (std::vector<uint32_t>{1, 3}));
  const std::string dir = root_ + "/jobs/42";
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  if (geteuid() == 0) {
    EXPECT_EQ(st.st_uid, 4242u);
  }
  EXPECT_EQ(res_.present.count(42), 1u);
  const std::string env_file = dir + "/accel.env";
  ASSERT_EQ(stat(env_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  if (geteuid() == 0) {
    EXPECT_EQ(st.st_uid, 4242u);
  }
  auto text = readFileNoFollow(env_file);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("export ACCEL_DEVICES='cuda1,cuda3'\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("export ACCEL_JOB_DIR='" + dir + "'\n"), std::string::npos) << *text;
  bool saw_devices = false;
  for (auto& [k, v] : r->env)
    if (k == "ACCEL_DEVICES") {
      EXPECT_EQ(v, "cuda1,cuda3");
      saw_devices = true;
    }
  EXPECT_TRUE(saw_devices);
  EXPECT_EQ(m->stats().devices_in_use, 2u);

  for (auto& [k, v] : r->env)
    EXPECT_NE(k.rfind("ACCEL_APPLIANCE_", 0), 0u)
        << "no appliance limit asked, none announced: " << k;

  ASSERT_TRUE(m->epilog(42).ok());
  EXPECT_FALSE(exists(dir));
  EXPECT_EQ(res_.present.count(42), 0u);
  EXPECT_FALSE(m->job(42).has_value());
  EXPECT_EQ(m->stats().devices_in_use, 0u);
  EXPECT_FALSE(exists(root_ + "/state/42.json"));
}

TEST_F(JobManagerTest, EpilogOfUnknownJobAndEpilogTwiceSucceed) {
  auto m = make();
  EXPECT_TRUE(m->epilog(7).ok());
  ASSERT_TRUE(m->prolog(spec(8)).ok());
  EXPECT_TRUE(m->epilog(8).ok());
  EXPECT_TRUE(m->epilog(8).ok());
}

TEST_F(JobManagerTest, HeldGpuIsNeverGivenTwice) {
  auto m = make();
  ASSERT_TRUE(m->prolog(spec(1, "0")).ok());
  auto r = m->prolog(spec(2, "0"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kConflict);
  // Kept for its epilog, failed and holding nothing: GPU 0 stays job 1's.
  ASSERT_TRUE(m->job(2).has_value());
  EXPECT_EQ(m->job(2)->phase, JobPhase::kFailed);
  EXPECT_TRUE(m->job(2)->devices.empty());
  EXPECT_EQ(m->job(1)->devices, std::vector<uint32_t>{0});
  EXPECT_FALSE(exists(root_ + "/jobs/2"));
  ASSERT_TRUE(m->epilog(2).ok());
  EXPECT_FALSE(m->job(2).has_value());
  EXPECT_TRUE(m->job(1).has_value());
}

TEST_F(JobManagerTest, FailedPrologRollsBackAndRetrySucceeds) {
  auto m = make();
  res_.fail_setup_for = 5;
  auto r = m->prolog(spec(5, "2"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("controller unreachable"), std::string::npos);
  EXPECT_FALSE(exists(root_ + "/jobs/5"));   // the directory step was undone
  EXPECT_EQ(m->stats().devices_in_use, 0u);  // the GPU was released
  EXPECT_EQ(m->stats().last_errors.size(), 1u);
  res_.fail_setup_for = -1;
  auto again = m->prolog(spec(5, "2"));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(exists(root_ + "/jobs/5"));
}

TEST_F(JobManagerTest, PrologIsIdempotentOnceReady) {
  auto m = make();
  auto a = m->prolog(spec(9, "1"));
  auto b = m->prolog(spec(9, "1"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->devices, b->devices);
  EXPECT_EQ(m->stats().devices_in_use, 1u);
}

TEST_F(JobManagerTest, RestartReadoptsReadyJobsAndEpilogCleansAll) {
  {
    auto m = make();
    ASSERT_TRUE(m->prolog(spec(11, "0,1")).ok());
  }  // the daemon "dies": nothing is torn down
  auto m = make();
  EXPECT_EQ(last_recovery_.adopted, 1u);
  ASSERT_TRUE(m->job(11).has_value());
  EXPECT_EQ(m->stats().devices_in_use, 2u);
  EXPECT_FALSE(m->prolog(spec(12, "1")).ok());  // still held after restart
  ASSERT_TRUE(m->epilog(11).ok());
  EXPECT_FALSE(exists(root_ + "/jobs/11"));
  EXPECT_EQ(res_.present.count(11), 0u);
}

TEST_F(JobManagerTest, RestartRollsBackHalfDonePrologAndFinishesHalfDoneEpilog) {
  JobStore store(root_ + "/state");
  ASSERT_TRUE(store.open().ok());
  JobRecord half;
  half.spec = spec(21, "3");
  half.phase = JobPhase::kProlog;
  half.devices = {3};
  ASSERT_TRUE(store.save(half).ok());
  ASSERT_TRUE(makeDirectory(root_ + "/jobs/21", 0700).ok());
  res_.present.insert(21);
  JobRecord ending = half;
  ending.spec.job_id = 22;
  ending.phase = JobPhase::kEpilog;
  ending.devices = {2};
  ASSERT_TRUE(store.save(ending).ok());
  res_.present.insert(22);

  auto m = make();
  EXPECT_EQ(last_recovery_.rolled_back, 1u);
  EXPECT_EQ(last_recovery_.cleaned, 1u);
  // Both jobs' ends are reported, for the daemon to stream: their hooks failed unheard.
  ASSERT_EQ(last_recovery_.ended.size(), 2u);
  for (const auto& end : last_recovery_.ended) {
    EXPECT_TRUE(end.job_id == 21 || end.job_id == 22) << end.job_id;
    EXPECT_EQ(end.rolled_back, end.job_id == 21) << end.job_id;
    EXPECT_FALSE(end.time_limit);
  }
  EXPECT_TRUE(res_.present.empty());
  EXPECT_FALSE(exists(root_ + "/jobs/21"));
  EXPECT_EQ(m->stats().jobs, 0u);
  EXPECT_EQ(m->stats().devices_in_use, 0u);
}

TEST_F(JobManagerTest, FailedEpilogKeepsTheRecordAndRetryFinishes) {
  auto m = make();
  ASSERT_TRUE(m->prolog(spec(31, "0")).ok());
  res_.fail_teardown_for = 31;
  ASSERT_FALSE(m->epilog(31).ok());
  ASSERT_TRUE(m->job(31).has_value());
  EXPECT_EQ(m->job(31)->phase, JobPhase::kFailed);
  EXPECT_EQ(m->stats().devices_in_use, 1u);  // not released until really clean
  res_.fail_teardown_for = -1;
  ASSERT_TRUE(m->epilog(31).ok());
  EXPECT_EQ(m->stats().devices_in_use, 0u);
}

TEST_F(JobManagerTest, ConcurrentPrologsGetDistinctDevices) {
  auto m = make();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (uint32_t i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      if (m->prolog(spec(100 + i, std::to_string(i))).ok()) ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 4);
  std::set<uint32_t> seen;
  for (const auto& j : m->jobs())
    for (auto d : j.devices) EXPECT_TRUE(seen.insert(d).second);
  EXPECT_EQ(seen.size(), 4u);
  threads.clear();
  for (uint32_t i = 0; i < 4; ++i)
    threads.emplace_back([&, i] { EXPECT_TRUE(m->epilog(100 + i).ok()); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(m->stats().jobs, 0u);
}

}  // namespace
}  // namespace accel::agent

namespace accel::agent {
namespace {

TEST_F(JobManagerTest, RequestTheNodeCannotMeetIsKeptAsFailedHoldingNothing) {
  auto m = make();
  JobRequestSpec s = spec(51, "7");  // GPU 7: not on this node -> kNotFound: node fault
  auto r = m->prolog(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kNotFound);
  // A node fault too leaves a failed record holding nothing, for the epilog.
  ASSERT_TRUE(m->job(51).has_value());
  EXPECT_EQ(m->job(51)->phase, JobPhase::kFailed);
  EXPECT_TRUE(m->job(51)->devices.empty());

  JobRequestSpec bad = spec(52, "1,");  // malformed list: the job's own request
  auto u = m->prolog(bad);
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error().code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(m->job(52).has_value());
  EXPECT_EQ(m->job(52)->phase, JobPhase::kFailed);
  EXPECT_TRUE(m->job(52)->devices.empty());
  EXPECT_FALSE(m->job(52)->last_error.empty());
  EXPECT_FALSE(exists(root_ + "/jobs/52"));
  EXPECT_EQ(m->stats().devices_in_use, 0u);
  ASSERT_TRUE(m->epilog(52).ok());
  EXPECT_FALSE(m->job(52).has_value());
}

}  // namespace
}  // namespace accel::agent

namespace accel::agent {
namespace {

// The steps of a job holding local devices, or IPUs (remote, over IPUoF),
// run its budget's clock; those of a job with neither do not. The extern
// step (PrologFlags=contain) never does.
TEST_F(JobManagerTest, StepsRunTheClockOfGpuAndIpuJobsOnly) {
  auto m = make();
  JobRequestSpec ipu = spec(71);
  ipu.ipus = 2;
  JobRequestSpec gpu = spec(72, "1");
  JobRequestSpec cpu = spec(73);
  for (const auto& s : {ipu, gpu, cpu}) ASSERT_TRUE(m->prolog(s).ok());
  for (uint32_t job : {71u, 72u, 73u}) {
    ASSERT_TRUE(m->stepStarted(job, 0xFFFFFFFC).ok());  // the extern step
    EXPECT_TRUE(m->job(job)->budget.runs.empty()) << job;
    ASSERT_TRUE(m->stepStarted(job, 0xFFFFFFFB).ok());  // the batch step
  }
  for (uint32_t job : {71u, 72u}) {
    auto rec = m->job(job);
    ASSERT_TRUE(rec.has_value());
    const auto& runs = rec->budget.runs;
    ASSERT_EQ(runs.size(), 1u) << job;
    EXPECT_EQ(runs[0].key, kLocalStepsKey);
    EXPECT_EQ(runs[0].start_ns, 1000);
    EXPECT_EQ(runs[0].end_ns, 0) << "open while the step runs";
    ASSERT_TRUE(m->stepEnded(job, 0xFFFFFFFB).ok());
    EXPECT_NE(m->job(job)->budget.runs[0].end_ns, 0) << "closed when the step ends";
  }
  EXPECT_TRUE(m->job(73)->budget.runs.empty());
}

TEST_F(JobManagerTest, TasksAndStepsAreTrackedPersistedAndReadopted) {
  {
    auto m = make();
    ASSERT_TRUE(m->prolog(spec(61)).ok());
    ASSERT_TRUE(m->stepStarted(61, 0).ok());
    ASSERT_TRUE(m->taskStarted(61, TaskRef{0, 1234, 99}).ok());
    ASSERT_TRUE(m->taskStarted(61, TaskRef{0, 1234, 99}).ok());  // repeated report
    ASSERT_TRUE(m->taskStarted(61, TaskRef{0, 1235, 100}).ok());
    EXPECT_EQ(m->taskStarted(62, TaskRef{0, 1, 1}).error().code(), ErrorCode::kNotFound);
    ASSERT_EQ(m->job(61)->tasks.size(), 2u);
  }
  auto m = make();  // restart: tasks come back from the record
  ASSERT_EQ(m->job(61)->tasks.size(), 2u);
  EXPECT_EQ(m->job(61)->tasks[0].start_ticks, 99u);
  ASSERT_TRUE(m->taskExited(61, 1234).ok());
  EXPECT_EQ(m->job(61)->tasks.size(), 1u);
  ASSERT_TRUE(m->stepEnded(61, 0).ok());
  EXPECT_TRUE(m->job(61)->tasks.empty());
  EXPECT_TRUE(m->job(61)->steps.empty());
}

}  // namespace
}  // namespace accel::agent

namespace accel::agent {
namespace {

TEST(EnvFileTest, QuotesForAPosixShell) {
  EXPECT_EQ(renderEnvFile({{"A", "x y"}, {"B", "it's"}}),
            "# The environment accel-agent gives this job's tasks.\n"
            "export A='x y'\n"
            "export B='it'\\''s'\n");
}

}  // namespace
}  // namespace accel::agent

namespace accel::agent {
namespace {

// A node with neither a V-IPU controller nor IPUs of its own cannot serve an
// IPU job: the job fails as its own request would (kInvalidArgument), holds
// nothing, and its record names what is missing. Jobs that ask for no IPUs
// are untouched; a node never told it lacks a controller assumes one.
TEST_F(JobManagerTest, IpuJobOnANodeWithoutIpusIsAConfigurationFault) {
  auto m = make();
  JobRequestSpec ipu = spec(81);
  ipu.ipus = 2;
  ipu.node = "gpu7";
  EXPECT_FALSE(m->kindFault(ipu).has_value()) << "unknown: the steps may reach a controller";
  m->setNoIpuController("no vipu.conf beside /etc/slurm/accel.conf");
  auto fault = m->kindFault(ipu);
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->message,
            "this node (gpu7) has no V-IPU controller (no vipu.conf beside /etc/slurm/accel.conf) "
            "and no IPUs of "
            "its own, yet the job asked for 2 IPUs: a fault of the cluster's configuration, not of "
            "the job");
  EXPECT_EQ(
      fault->drainReason(),
      "accel: job 81 asked for IPUs but this node has no V-IPU controller (no vipu.conf beside "
      "/etc/slurm/accel.conf); check the Slurm partition's nodes");

  auto r = m->prolog(ipu);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message(), fault->message);
  ASSERT_TRUE(m->job(81).has_value());
  EXPECT_EQ(m->job(81)->phase, JobPhase::kFailed);
  EXPECT_EQ(m->job(81)->last_error, fault->message);
  EXPECT_TRUE(m->job(81)->devices.empty());
  EXPECT_FALSE(exists(root_ + "/jobs/81"));
  {
    std::lock_guard<std::mutex> g(res_.mu);
    EXPECT_EQ(res_.present.count(81), 0u) << "no step ran";
  }
  // Tried again (the prolog run once more), it fails the same way.
  auto again = m->prolog(ipu);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message(), fault->message);
  ASSERT_TRUE(m->epilog(81).ok());

  // A GPU job on the same node is served as before.
  JobRequestSpec gpu = spec(82, "1");
  EXPECT_FALSE(m->kindFault(gpu).has_value());
  ASSERT_TRUE(m->prolog(gpu).ok());
  ASSERT_TRUE(m->epilog(82).ok());

  // IPUs of the node's own serve the job without a controller.
  Inventory cards = fourGpus();
  InventoryDevice card;
  card.slot = {4, "ipu", 0};
  card.name = "ipu0";
  cards.devices.push_back(card);
  cards.device_distance.assign(5, std::vector<int>(5, 2));
  cards.nic_distance.assign(5, 0);
  m->replaceInventory(cards);
  JobRequestSpec local = spec(83);
  local.ipus = 1;
  EXPECT_FALSE(m->kindFault(local).has_value());
  auto ok = m->prolog(local);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(ok->devices, (std::vector<uint32_t>{4}));
  ASSERT_TRUE(m->epilog(83).ok());
}

// The steps between the directory and the hand-over write into it (IPUoF
// files, accel.env): the job's owner must not be able to touch it meanwhile,
// from another job of theirs on the node. It becomes theirs last.
TEST_F(JobManagerTest, TheJobDirectoryIsTheDaemonsUntilThePrologsLastStep) {
  auto m = make();
  auto r = m->prolog(spec(45));
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(res_.dir_owner_in_setup.count(45), 1u);
  EXPECT_EQ(res_.dir_owner_in_setup[45], geteuid());
  struct stat st {};
  ASSERT_EQ(lstat((root_ + "/jobs/45").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  if (geteuid() != 0) GTEST_SKIP() << "handing the directory to uid 4242 needs root";
  EXPECT_EQ(st.st_uid, 4242u);
  EXPECT_EQ(st.st_gid, 4343u);
  ASSERT_TRUE(m->epilog(45).ok());
}

TEST_F(JobManagerTest, IpuJobsGetTheirDirectoryUnderTheIpuRoot) {
  ASSERT_TRUE(makeDirectory(root_ + "/ipuof", 0755).ok());
  JobDirStep step(root_ + "/jobs", root_ + "/ipuof");
  JobRecord ipu;
  ipu.spec = spec(71);
  ipu.spec.ipus = 2;
  ASSERT_TRUE(step.setUp(ipu).ok());
  EXPECT_EQ(ipu.job_dir, root_ + "/ipuof/71");
  EXPECT_TRUE(exists(root_ + "/ipuof/71"));
  JobRecord plain;
  plain.spec = spec(72);
  ASSERT_TRUE(step.setUp(plain).ok());
  EXPECT_EQ(plain.job_dir, root_ + "/jobs/72");
  // An epilog that knows only the job id removes the directory wherever it is.
  JobRecord bare;
  bare.spec.job_id = 71;
  ASSERT_TRUE(step.tearDown(bare).ok());
  EXPECT_FALSE(exists(root_ + "/ipuof/71"));
  bare.spec.job_id = 72;
  ASSERT_TRUE(step.tearDown(bare).ok());
  EXPECT_FALSE(exists(root_ + "/jobs/72"));
}

// With a JobDirSpace the job directory is a tmpfs of its own: a job that
// fills it (bytes or inodes) fills nothing of the root's file system, and the
// epilog's release gives the space back before tear-down removes the
// directory. Run in a child with a mount namespace of its own, so nothing
// stays mounted whatever happens; each exit code names the check that failed.
TEST_F(JobManagerTest, AJobDirectoryOfItsOwnFileSystemIsBoundedAndReleasedFirst) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting the job's tmpfs needs root";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      _exit(2);
    JobDirStep step(root_ + "/jobs", "", {}, JobDirSpace{.size = 1 << 20, .inodes = 64});
    JobDirHandOver hand_over;
    JobRecord rec;
    rec.spec = spec(46);
    if (!step.setUp(rec).ok() || !hand_over.setUp(rec).ok()) _exit(3);
    struct statfs fs {};
    struct stat dir_st {
    }, root_st{};
    if (statfs(rec.job_dir.c_str(), &fs) != 0 || fs.f_type != 0x01021994 /* TMPFS_MAGIC */)
      _exit(4);
    if (stat(rec.job_dir.c_str(), &dir_st) != 0 || stat(root_.c_str(), &root_st) != 0 ||
        dir_st.st_dev == root_st.st_dev || dir_st.st_uid != 4242 || (dir_st.st_mode & 0777) != 0700)
      _exit(5);
    // 2 MiB do not fit in 1 MiB; 64 inodes run out before 100 files.
    const int fd = open((rec.job_dir + "/big").c_str(), O_WRONLY | O_CREAT, 0600);
    std::string mib(1 << 20, 'x');
    bool full = false;
    for (int i = 0; i < 2 && fd >= 0 && !full; ++i)
      full = write(fd, mib.data(), mib.size()) != static_cast<ssize_t>(mib.size());
    if (fd < 0 || !full) _exit(6);
    close(fd);
    int made = 0;
    while (made < 100 && mkdir((rec.job_dir + "/d" + std::to_string(made)).c_str(), 0700) == 0)
      ++made;
    if (made >= 100 || errno != ENOSPC) _exit(7);
    // The epilog's first act: the directory is no mount point any more.
    if (!step.release(rec).ok()) _exit(8);
    if (statfs(rec.job_dir.c_str(), &fs) != 0 || fs.f_type == 0x01021994) _exit(9);
    if (!step.tearDown(rec).ok() || access(rec.job_dir.c_str(), F_OK) == 0) _exit(10);
    // A second set-up over a leftover mount starts clean.
    JobRecord again;
    again.spec = spec(47);
    if (!step.setUp(again).ok() || !step.setUp(again).ok()) _exit(11);
    if (!step.tearDown(again).ok() || access(again.job_dir.c_str(), F_OK) == 0) _exit(12);
    // A root that is no directory (a broken IpuofDir): the set-up fails, the
    // release and tear-down find nothing to do there.
    const std::string file_root = root_ + "/not-a-dir";
    if (close(open(file_root.c_str(), O_CREAT | O_WRONLY, 0600)) != 0) _exit(13);
    JobDirStep broken(file_root, "", {}, JobDirSpace{.size = 1 << 20, .inodes = 64});
    JobRecord third;
    third.spec = spec(48);
    if (broken.setUp(third).ok() || !broken.release(third).ok() || !broken.tearDown(third).ok())
      _exit(14);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "2: no mount namespace; 3: set-up failed; 4: not a tmpfs; 5: shares the root's file "
         "system, or not handed over; 6: 2 MiB fit; 7: 100 directories fit; 8, 9: release left "
         "it mounted; 10: tear-down left it; 11, 12: a leftover mount was not cleared; 13, 14: "
         "a root that is no directory failed the clean-up";
}

}  // namespace
}  // namespace accel::agent
