// JobProcesses: finding a job's cgroup from its tasks' /proc/PID/cgroup and
// the mount table, and what each limit action reaches. The parsing tests use
// the lines this machine kind and Slurm write; the signalling tests use real
// child processes, listed in a cgroup tree of plain files (the layout Slurm's
// proctrack/cgroup makes) and a /proc of copies, so that which process got
// which signal is what the kernel says of each child; one test makes Slurm's
// v2 layout in the machine's real cgroup2 hierarchy.
#include "accel/agentd/job_processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "accel/common/proc_stat.h"
#include "temp_dir.h"

namespace accel::agentd {
namespace {

using agent::LimitAction;
namespace fs = std::filesystem;

// From a node of the sandbox: the machine's hybrid hierarchy, with the
// node's own freezer directory bound over the freezer mount point.
constexpr const char* kMountinfo =
    "25 1 0:23 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "30 25 0:27 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "31 25 0:28 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "33 25 0:30 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "40 25 0:27 /accel-sb-1a2b-ipa20 /sys/fs/cgroup/freezer rw,relatime shared:9 - cgroup "
    "cgroup rw,freezer\n"
    "41 25 0:22 / /mnt/with\\040space rw - cgroup cgroup rw,freezer,cpu\n";

TEST(CgroupMountsTest, FreezerAndUnifiedOnlyAndTheLastMountOnAPointWins) {
  auto m = cgroupMounts(kMountinfo);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].version, CgroupVersion::kV2);
  EXPECT_EQ(m[0].mount_point, "/sys/fs/cgroup/unified");
  EXPECT_EQ(m[1].version, CgroupVersion::kV1);
  EXPECT_EQ(m[1].root, "/accel-sb-1a2b-ipa20");
  EXPECT_EQ(m[1].mount_point, "/sys/fs/cgroup/freezer");
  EXPECT_EQ(m[2].mount_point, "/mnt/with space");
}

TEST(JobCgroupTest, V1FreezerPathCutAtTheJobAndMappedThroughTheMountRoot) {
  auto m = cgroupMounts(kMountinfo);
  const std::string text =
      "9:name=systemd:/\n8:pids:/\n6:freezer:/accel-sb-1a2b-ipa20/slurm_ipa20/uid_1001/job_13/"
      "step_0\n5:devices:/accel-sb-1a2b-ipa20/slurm_ipa20/uid_1001/job_13/step_0\n0::/\n";
  auto cg = jobCgroupFrom(text, m, 13, 1001);
  ASSERT_TRUE(cg.has_value());
  EXPECT_EQ(cg->version, CgroupVersion::kV1);
  EXPECT_EQ(cg->dir, "/sys/fs/cgroup/freezer/slurm_ipa20/uid_1001/job_13");
}

TEST(JobCgroupTest, RefusesAnotherJobAnotherUserAndPathsOutsideTheMount) {
  auto m = cgroupMounts(kMountinfo);
  m.pop_back();  // only the node's own freezer directory is mounted
  auto v1 = [](const std::string& path) { return "6:freezer:" + path + "\n0::/\n"; };
  const std::string base = "/accel-sb-1a2b-ipa20/slurm_ipa20";
  // job_130 is not job_13.
  EXPECT_FALSE(jobCgroupFrom(v1(base + "/uid_1001/job_130/step_0"), m, 13, 1001));
  // The job under another user's directory.
  EXPECT_FALSE(jobCgroupFrom(v1(base + "/uid_1002/job_13/step_0"), m, 13, 1001));
  // The job's name twice (a cgroup a user made below its own job).
  EXPECT_FALSE(jobCgroupFrom(v1(base + "/uid_1001/job_13/step_0/uid_1001/job_13"), m, 13, 1001));
  // Not below the root of the mount seen here (another node's directory).
  EXPECT_FALSE(
      jobCgroupFrom(v1("/accel-sb-1a2b-ipa21/slurm_ipa21/uid_1001/job_13/step_0"), m, 13, 1001));
  EXPECT_FALSE(jobCgroupFrom(v1(base + "/../uid_1001/job_13/step_0"), m, 13, 1001));
  // A task in no job's cgroup at all (proctrack/linuxproc).
  EXPECT_FALSE(jobCgroupFrom("6:freezer:/\n0::/user.slice\n", m, 13, 1001));
}

TEST(JobCgroupTest, V2PathOfSlurmsLayout) {
  std::vector<CgroupMount> m{{CgroupVersion::kV2, "/", "/sys/fs/cgroup"}};
  auto cg =
      jobCgroupFrom("0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n", m, 42, 1001);
  ASSERT_TRUE(cg.has_value());
  EXPECT_EQ(cg->version, CgroupVersion::kV2);
  EXPECT_EQ(cg->dir, "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_42");
}

TEST(JobCgroupTest, StepNames) {
  EXPECT_EQ(stepOfCgroupName("step_batch"), agent::kBatchStepId);
  EXPECT_EQ(stepOfCgroupName("step_extern"), kExternStepId);
  EXPECT_EQ(stepOfCgroupName("step_interactive"), kInteractiveStepId);
  EXPECT_EQ(stepOfCgroupName("step_12"), 12u);
  EXPECT_FALSE(stepOfCgroupName("step_"));
  EXPECT_FALSE(stepOfCgroupName("step_-1"));
  EXPECT_FALSE(stepOfCgroupName("step_99999999999"));
  EXPECT_FALSE(stepOfCgroupName("slurm"));
}

TEST(JobCgroupTest, WhatEachActionReaches) {
  agent::JobRecord rec;
  rec.surrogate_steps = {3};
  EXPECT_FALSE(actionReachesStep(rec, LimitAction::kWarn, agent::kBatchStepId));
  EXPECT_TRUE(actionReachesStep(rec, LimitAction::kWarn, 0));
  EXPECT_FALSE(actionReachesStep(rec, LimitAction::kWarn, 3));
  EXPECT_TRUE(actionReachesStep(rec, LimitAction::kEnforce, agent::kBatchStepId));
  EXPECT_FALSE(actionReachesStep(rec, LimitAction::kEnforce, 3));
  EXPECT_TRUE(actionReachesStep(rec, LimitAction::kKill, 3));
  for (auto a : {LimitAction::kWarn, LimitAction::kEnforce, LimitAction::kKill})
    EXPECT_FALSE(actionReachesStep(rec, a, kExternStepId));
}

// A child that waits for signals, once it is ready for them (`ignore_term`:
// it ignores SIGTERM): the parent returns only after the child said so.
pid_t pausingChild(bool ignore_term) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  pid_t p = fork();
  if (p == 0) {
    if (ignore_term) signal(SIGTERM, SIG_IGN);
    close(ready[0]);
    close(ready[1]);  // the parent's read ends: the child is ready
    for (;;) pause();
  }
  close(ready[1]);
  char c = 0;
  while (read(ready[0], &c, 1) < 0 && errno == EINTR) {
  }
  close(ready[0]);
  return p;
}

// A job of real processes: a fake /proc (copies of each child's stat and
// status, its cgroup file written here) and a cgroup tree of plain files.
class JobProcessesTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kJob = 7;

  void SetUp() override {
    uid_ = getuid();
    proc_ = dir_.file("proc");
    cg_ = dir_.file("cg");
    job_ = cg_ + "/slurm_n1/uid_" + std::to_string(uid_) + "/job_" + std::to_string(kJob);
    for (const char* s : {"step_batch", "step_0", "step_3", "step_extern"})
      fs::create_directories(job_ + "/" + s);
    fs::create_directories(proc_ + "/self");
    rec_.spec.job_id = kJob;
    rec_.spec.uid = uid_;
    rec_.spec.appliance_signal = SIGUSR1;
    rec_.ready_ns = 1;
    rec_.surrogate_steps = {3};
  }

  void TearDown() override {
    for (pid_t p : children_) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
  }

  // A child that waits for signals; `ignore_term`: it ignores SIGTERM. Listed
  // in `step` (a step_* directory, or a subdirectory path below the job).
  pid_t child(const std::string& step, bool ignore_term = false, uint32_t shown_uid = ~0u,
              const std::string& shown_comm = "") {
    pid_t p = pausingChild(ignore_term);
    children_.push_back(p);
    const std::string pd = proc_ + "/" + std::to_string(p);
    fs::create_directories(pd);
    std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
    std::ofstream(pd + "/stat") << stat.rdbuf();
    std::ifstream status("/proc/" + std::to_string(p) + "/status");
    std::ostringstream out;
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("Uid:", 0) == 0 && shown_uid != ~0u)
        line = "Uid:\t" + std::to_string(shown_uid) + "\t0\t0\t0";
      if (line.rfind("Name:", 0) == 0 && !shown_comm.empty()) line = "Name:\t" + shown_comm;
      out << line << "\n";
    }
    std::ofstream(pd + "/status") << out.str();
    std::ofstream(pd + "/cgroup") << "6:freezer:/slurm_n1/uid_" << uid_ << "/job_" << kJob << "/"
                                  << step << "\n0::/\n";
    fs::create_directories(job_ + "/" + step);
    std::ofstream(job_ + "/" + step + "/cgroup.procs", std::ios::app) << p << "\n";
    return p;
  }

  agent::TaskRef task(uint32_t step, pid_t pid) {
    return agent::TaskRef{step, pid, *readStartTicks(pid, proc_)};
  }

  JobProcesses::Options options() {
    JobProcesses::Options o;
    o.proc_root = proc_;
    o.mounts = std::vector<CgroupMount>{{CgroupVersion::kV1, "/", cg_}};
    o.ask_slurm = [this](uint32_t job, int sig, bool steps_only) {
      asked_.push_back({job, sig, steps_only});
      return okStatus();
    };
    return o;
  }

  // Still running after a while (a signal sent is delivered long before).
  static bool running(pid_t p) { return endedBy(p, 10) == 0; }

  // The signal that ended `p`, waiting up to a second; 0: still running.
  static int endedBy(pid_t p, int tries = 100) {
    for (int i = 0; i < tries; ++i) {
      int st = 0;
      if (waitpid(p, &st, WNOHANG) == p) return WIFSIGNALED(st) ? WTERMSIG(st) : -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  }

  struct Asked {
    uint32_t job;
    int sig;
    bool steps_only;
  };
  support::TempDir dir_{"accel-job-processes"};
  uint32_t uid_ = 0;
  std::string proc_, cg_, job_;
  agent::JobRecord rec_;
  std::vector<pid_t> children_;
  std::vector<Asked> asked_;
};

TEST_F(JobProcessesTest, WarningReachesEveryProcessOfTheStepsButTheBatchStepAndTheSpared) {
  pid_t shell = child("step_batch");
  pid_t shell_child = child("step_batch");
  pid_t work = child("step_0");
  pid_t worker = child("step_0/user/task_0");  // nested below the step
  pid_t waiter = child("step_3");              // a surrogate step's waiter
  pid_t ext = child("step_extern");
  rec_.tasks = {task(agent::kBatchStepId, shell), task(0, work)};
  JobProcesses jp(options());
  jp.observe(rec_);
  EXPECT_EQ(jp.signal(rec_, LimitAction::kWarn, SIGUSR1), 2);
  EXPECT_EQ(endedBy(work), SIGUSR1);
  EXPECT_EQ(endedBy(worker), SIGUSR1);
  for (pid_t p : {shell, shell_child, waiter, ext}) EXPECT_TRUE(running(p)) << p;
  EXPECT_TRUE(jp.followUp(rec_, LimitAction::kWarn, SIGUSR1, {}).empty());
  EXPECT_TRUE(asked_.empty()) << "slurmctld asked although the cgroups were found";
  EXPECT_NE(jp.describe().find("cgroup v1"), std::string::npos) << jp.describe();
}

TEST_F(JobProcessesTest, WarningWithBReachesTheBatchShellAlone) {
  pid_t shell = child("step_batch");
  pid_t shell_child = child("step_batch");
  pid_t work = child("step_0");
  rec_.spec.appliance_signal_batch = true;
  rec_.tasks = {task(agent::kBatchStepId, shell), task(0, work)};
  JobProcesses jp(options());
  EXPECT_EQ(jp.signal(rec_, LimitAction::kWarn, SIGUSR1), 1);
  EXPECT_EQ(endedBy(shell), SIGUSR1);
  EXPECT_TRUE(running(shell_child));
  EXPECT_TRUE(running(work));
}

TEST_F(JobProcessesTest, TermReachesTheBatchStepButSrunSigkillTheSparedNeitherTheExternStep) {
  pid_t shell = child("step_batch");
  pid_t orphan =
      child("step_batch", /*ignore_term=*/true);  // setsid, double-forked: listed all the same
  pid_t work = child("step_0");
  pid_t waiter = child("step_3");
  pid_t ext = child("step_extern");
  pid_t other_user = child("step_0", false, uid_ + 1);   // shown as another user's: never signalled
  pid_t srun = child("step_batch", false, ~0u, "srun");  // would kill its step at once on SIGTERM
  rec_.tasks = {task(agent::kBatchStepId, shell), task(0, work)};
  JobProcesses jp(options());
  EXPECT_EQ(jp.signal(rec_, LimitAction::kEnforce, SIGTERM), 3);
  EXPECT_EQ(endedBy(shell), SIGTERM);
  EXPECT_EQ(endedBy(work), SIGTERM);
  for (pid_t p : {orphan, waiter, ext, other_user, srun}) EXPECT_TRUE(running(p)) << p;
  // After the grace: what is left of the steps, the spared waiter too, never
  // the extern step or another user's process. The tasks are gone by now:
  // the cgroup found while they ran is used.
  EXPECT_EQ(jp.signal(rec_, LimitAction::kKill, SIGKILL), 3);  // the others are gone
  EXPECT_EQ(endedBy(orphan), SIGKILL);
  EXPECT_EQ(endedBy(waiter), SIGKILL);
  EXPECT_EQ(endedBy(srun), SIGKILL);
  EXPECT_TRUE(running(ext));
  EXPECT_TRUE(running(other_user));
}

TEST_F(JobProcessesTest, AProcessStillListedAfterSigkillIsReturnedAsLeftOver) {
  pid_t shell = child("step_batch");
  rec_.tasks = {task(agent::kBatchStepId, shell)};
  JobProcesses jp(options());
  jp.observe(rec_);
  EXPECT_EQ(jp.signal(rec_, LimitAction::kKill, SIGKILL), 1);
  EXPECT_EQ(endedBy(shell), SIGKILL);
  // The copy of its /proc entry stays and says it runs: as a process stuck
  // in the kernel would.
  auto left = jp.followUp(rec_, LimitAction::kKill, SIGKILL, std::chrono::milliseconds(100));
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].pid, shell);
  // Once it is gone from the step, nothing is left.
  std::ofstream(job_ + "/step_batch/cgroup.procs", std::ios::trunc);
  EXPECT_TRUE(
      jp.followUp(rec_, LimitAction::kKill, SIGKILL, std::chrono::milliseconds(100)).empty());
}

// No cgroup tracking: slurmctld signals the job first (its tracking finds a
// task's whole tree while the task lives), nothing is sent from here then;
// the registered tasks are signalled directly only where slurmctld cannot
// (and get SIGKILL in any case).
TEST_F(JobProcessesTest, WithoutCgroupsSlurmctldSignalsTheJobAndTheTasksAreTheBackstop) {
  pid_t shell = child("step_batch");
  pid_t work = child("step_0");
  pid_t task_child = child("step_0");
  // linuxproc: the tasks are in no job's cgroup.
  for (pid_t p : {shell, work, task_child})
    std::ofstream(proc_ + "/" + std::to_string(p) + "/cgroup", std::ios::trunc) << "6:freezer:/\n";
  rec_.tasks = {task(agent::kBatchStepId, shell), task(0, work)};
  std::string told;
  auto o = options();
  bool slurmctld_answers = true;
  o.ask_slurm = [&](uint32_t job, int sig, bool steps_only) {
    asked_.push_back({job, sig, steps_only});
    return slurmctld_answers ? okStatus() : Status(Error(ErrorCode::kUnavailable, "no answer"));
  };
  o.tracking_changed = [&](const std::string& how) { told = how; };
  JobProcesses jp(o);
  EXPECT_EQ(jp.signal(rec_, LimitAction::kWarn, SIGUSR1), JobProcesses::kThroughSlurmctld);
  jp.followUp(rec_, LimitAction::kWarn, SIGUSR1, {});
  ASSERT_EQ(asked_.size(), 1u);
  EXPECT_EQ(asked_[0].job, kJob);
  EXPECT_EQ(asked_[0].sig, SIGUSR1);
  EXPECT_TRUE(asked_[0].steps_only);
  EXPECT_TRUE(running(work)) << "signalled from here although slurmctld did it";
  // slurmctld does not answer: the registered tasks of the steps get it here.
  slurmctld_answers = false;
  EXPECT_EQ(jp.signal(rec_, LimitAction::kEnforce, SIGTERM), JobProcesses::kThroughSlurmctld);
  jp.followUp(rec_, LimitAction::kEnforce, SIGTERM, {});
  ASSERT_EQ(asked_.size(), 2u);
  EXPECT_FALSE(asked_[1].steps_only);
  EXPECT_EQ(endedBy(shell), SIGTERM);
  EXPECT_EQ(endedBy(work), SIGTERM);
  EXPECT_TRUE(running(task_child));  // beyond the registered tasks: slurmctld's to reach
  EXPECT_NE(told.find("no cgroup process tracking"), std::string::npos) << told;
  EXPECT_EQ(jp.describe(), told);
}

// Without slurmctld to ask (unset), the registered tasks are signalled at once.
TEST_F(JobProcessesTest, WithoutCgroupsOrSlurmctldTheTasksAreSignalledAtOnce) {
  pid_t work = child("step_0");
  std::ofstream(proc_ + "/" + std::to_string(work) + "/cgroup", std::ios::trunc) << "6:freezer:/\n";
  rec_.tasks = {task(0, work)};
  auto o = options();
  o.ask_slurm = nullptr;
  JobProcesses jp(o);
  EXPECT_EQ(jp.signal(rec_, LimitAction::kEnforce, SIGTERM), 1);
  EXPECT_EQ(endedBy(work), SIGTERM);
}

// The real kernel's cgroup v2: Slurm's v2 layout made in this machine's
// unified hierarchy (/sys/fs/cgroup/unified here; its mount is read from the
// mount table as in the daemon), real children moved into it. SIGTERM
// reaches every process below step_0/user and nothing in step_0/slurm (where
// slurmstepd lives); SIGKILL is one write of cgroup.kill, which ends the
// process that ignored SIGTERM. Needs root, as CI runs.
TEST(JobProcessesV2Test, SlurmsV2LayoutOnTheRealKernel) {
  if (geteuid() != 0) GTEST_FAIL() << "this test must run as root (CI runs as root)";
  auto mounts = cgroupMounts([] {
    std::ifstream in("/proc/self/mountinfo");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }());
  auto v2 = std::find_if(mounts.begin(), mounts.end(),
                         [](const CgroupMount& m) { return m.version == CgroupVersion::kV2; });
  ASSERT_NE(v2, mounts.end()) << "no cgroup2 file system is mounted here";
  const std::string top = v2->mount_point + "/accel-test-" + std::to_string(getpid());
  const std::string step = top + "/system.slice/slurmstepd.scope/job_42/step_0";
  std::error_code ec;
  fs::create_directories(step + "/slurm", ec);
  ASSERT_FALSE(ec) << "cannot make " << step << ": " << ec.message();
  fs::create_directories(step + "/user/task_0", ec);
  ASSERT_FALSE(ec) << ec.message();
  std::vector<pid_t> kids;
  auto spawn = [&](const std::string& cgroup, bool ignore_term) {
    pid_t p = pausingChild(ignore_term);
    kids.push_back(p);
    std::ofstream(cgroup + "/cgroup.procs") << p << "\n";
    return p;
  };
  pid_t stepd = spawn(step + "/slurm", false);
  pid_t task = spawn(step + "/user/task_0", false);
  pid_t stubborn = spawn(step + "/user/task_0", true);
  agent::JobRecord rec;
  rec.spec.job_id = 42;
  rec.spec.uid = getuid();
  rec.ready_ns = 1;
  rec.tasks = {agent::TaskRef{0, task, *readStartTicks(task)}};
  JobProcesses jp(JobProcesses::Options{});
  jp.observe(rec);
  EXPECT_NE(jp.describe().find("cgroup v2"), std::string::npos) << jp.describe();
  auto endedBy = [](pid_t p, int tries) {
    for (int i = 0; i < tries; ++i) {
      int st = 0;
      if (waitpid(p, &st, WNOHANG) == p) return WIFSIGNALED(st) ? WTERMSIG(st) : -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  };
  EXPECT_EQ(jp.signal(rec, LimitAction::kEnforce, SIGTERM), 2);
  EXPECT_EQ(endedBy(task, 100), SIGTERM);
  EXPECT_EQ(endedBy(stubborn, 10), 0) << "it ignores SIGTERM";
  EXPECT_EQ(jp.signal(rec, LimitAction::kKill, SIGKILL), 1);
  EXPECT_EQ(endedBy(stubborn, 100), SIGKILL);
  EXPECT_EQ(endedBy(stepd, 10), 0) << "slurmstepd's cgroup was signalled";
  for (pid_t p : kids) {
    kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
  // Bottom-up, once the cgroups are empty.
  for (const char* d : {"/user/task_0", "/user", "/slurm", ""}) rmdir((step + d).c_str());
  for (std::string d = step.substr(0, step.rfind('/')); d.size() >= top.size();
       d = d.substr(0, d.rfind('/')))
    EXPECT_EQ(rmdir(d.c_str()), 0) << d << ": " << std::strerror(errno);
}

}  // namespace
}  // namespace accel::agentd
