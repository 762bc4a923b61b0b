// Surrogate steps: the step's name and command line, and the launch as the
// job's user (a stand-in for srun records who ran it and with what).
#include "accel/agentd/surrogate_steps.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "accel/agentd/control_handler.h"
#include "accel/common/safe_file.h"
#include "temp_dir.h"

namespace accel::agentd {
namespace {

// The test binary re-executed with this variable set stands in for an srun:
// it has whatever command line it was given and waits to be killed.
const bool kActsAsSrun = [] {
  if (std::getenv("ACCEL_TEST_ACT_AS_SRUN") != nullptr)
    for (;;) pause();
  return false;
}();

TEST(SurrogateStepsTest, StepNameIsTheApplianceJobIdWithItsCsxCount) {
  appliance::ApplianceJob compile, train;
  compile.id = "wsjob-vpd7iavtknrtvgonhe7mog";
  train.id = "wsjob-z3pbtbl8sgmfqtivpazrtn";
  train.systems = 1;
  EXPECT_EQ(surrogateStepName(compile), "wsjob-vpd7iavtknrtvgonhe7mog");
  EXPECT_EQ(surrogateStepName(train), "wsjob-z3pbtbl8sgmfqtivpazrtn-csx1");
}

// Every node of a job sees its appliance jobs; only the leader makes their steps.
TEST(SurrogateStepsTest, OnlyTheJobsLeaderMakesAStepForARunningApplianceJob) {
  agent::JobRecord rec;
  rec.spec.job_id = 65;
  rec.spec.user = "alice";
  rec.spec.node_list = "sbn[1-2]";
  rec.spec.node_count = 2;
  rec.phase = agent::JobPhase::kReady;
  appliance::ApplianceJob run;
  run.id = "wsjob-vpd7iavtknrtvgonhe7mog";
  run.slurm_job_id = 65;
  run.state = appliance::ApplianceState::kRunning;
  run.start_ns = 1;
  rec.spec.node = "sbn1";
  EXPECT_TRUE(wantsSurrogate(rec, run));
  rec.spec.node = "sbn2";
  EXPECT_FALSE(wantsSurrogate(rec, run)) << "a follower makes none";
  rec.spec.node_list.clear();
  rec.spec.node_count = 0;
  EXPECT_TRUE(wantsSurrogate(rec, run)) << "nodes unknown: this node leads, as on one node";

  rec.spec.node = "sbn1";
  rec.spec.node_list = "sbn[1-2]";
  appliance::ApplianceJob queued = run;
  queued.state = appliance::ApplianceState::kQueued;
  queued.start_ns = 0;
  EXPECT_FALSE(wantsSurrogate(rec, queued));
  appliance::ApplianceJob over = run;
  over.state = appliance::ApplianceState::kSucceeded;
  EXPECT_TRUE(wantsSurrogate(rec, over)) << "it ran between two polls";
  appliance::ApplianceJob bad = run;
  bad.id = "wsjob-; rm -rf /";
  EXPECT_FALSE(wantsSurrogate(rec, bad));
  appliance::ApplianceJob unread = run;  // a placeholder for an entry the agent could not read
  unread.unreadable = "unknown job state";
  EXPECT_FALSE(wantsSurrogate(rec, unread));
  rec.phase = agent::JobPhase::kFailed;
  EXPECT_FALSE(wantsSurrogate(rec, run));
}

TEST(SurrogateStepsTest, SrunRunsTheWaiterInTheJobAsOneOverlappingTask) {
  SurrogateOptions o{.srun = "/usr/bin/srun",
                     .accelctl = "/opt/accelctl",
                     .config_path = "/etc/a.conf",
                     .slurm_conf = ""};
  SurrogateSpec s{.job_id = 65,
                  .uid = 1,
                  .gid = 1,
                  .user = "u",
                  .appliance_job = "wsjob-a",
                  .step_name = "wsjob-a-csx1"};
  EXPECT_EQ(
      surrogateArgv(o, s),
      (std::vector<std::string>{"/usr/bin/srun", "--jobid=65", "--overlap", "-J", "wsjob-a-csx1",
                                "--ntasks=1", "--nodes=1", "--quiet", "/opt/accelctl", "--config",
                                "/etc/a.conf", "wait-appliance", "65", "wsjob-a"}));
}

TEST(SurrogateStepsTest, LaunchRunsAsTheJobsUserAndReportsTheEnd) {
  ASSERT_EQ(geteuid(), 0u) << "dropping to the job's user needs root";
  support::TempDir tmp("accel-surrogate");
  const std::string dir = tmp.path();
  chmod(dir.c_str(), 0777);
  const std::string fake = dir + "/srun";
  std::ofstream(fake) << "#!/bin/sh\necho \"$(id -u) $(id -g) $SLURM_CONF $*\" > " << dir
                      << "/ran\nexit 3\n";
  chmod(fake.c_str(), 0755);
  std::mutex mu;
  std::condition_variable cv;
  int status = -2;
  {
    SurrogateSteps steps(
        SurrogateOptions{
            .srun = fake, .accelctl = "w", .config_path = "c", .slurm_conf = "/s.conf"},
        [&](const SurrogateSpec& spec, int st) {
          EXPECT_EQ(spec.appliance_job, "wsjob-a");
          std::lock_guard<std::mutex> g(mu);
          status = st;
          cv.notify_all();
        });
    steps.launch(SurrogateSpec{.job_id = 7,
                               .uid = 65534,
                               .gid = 65534,
                               .user = "nobody",
                               .appliance_job = "wsjob-a",
                               .step_name = "wsjob-a"});
    std::unique_lock<std::mutex> lk(mu);
    ASSERT_TRUE(cv.wait_for(lk, std::chrono::seconds(10), [&] { return status != -2; }));
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
  std::ifstream in(dir + "/ran");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "65534 65534 /s.conf --jobid=7 --overlap -J wsjob-a --ntasks=1 --nodes=1 --quiet w "
            "--config c "
            "wait-appliance 7 wsjob-a\n");
  ASSERT_TRUE(tmp.remove());
}

TEST(SurrogateStepsTest, AStepGoneBeforeAdoptionIsReportedOnTheObjectsOwnThread) {
  std::mutex mu;
  std::condition_variable cv;
  int status = -2;
  std::thread::id reporter;
  SurrogateSteps steps(
      SurrogateOptions{
          .srun = "/nonexistent/srun", .accelctl = "w", .config_path = "c", .slurm_conf = ""},
      [&](const SurrogateSpec& spec, int st) {
        EXPECT_EQ(spec.job_id, 91u);
        std::lock_guard<std::mutex> g(mu);
        status = st;
        reporter = std::this_thread::get_id();
        cv.notify_all();
      });
  const SurrogateSpec spec{.job_id = 91,
                           .uid = 65534,
                           .gid = 65534,
                           .user = "nobody",
                           .appliance_job = "wsjob-gone",
                           .step_name = "wsjob-gone"};
  // No such srun runs: with gone_means_ended it ended unwatched, else nothing is said.
  steps.adopt(spec, 0, false);
  steps.adopt(spec, 0, true);
  std::unique_lock<std::mutex> lk(mu);
  ASSERT_TRUE(cv.wait_for(lk, std::chrono::seconds(10), [&] { return status != -2; }));
  EXPECT_EQ(status, -1);
  EXPECT_NE(reporter, std::this_thread::get_id());
  EXPECT_EQ(steps.waiting(), 0u);
}

TEST(SurrogateStepsTest, DestroyingStopsReportingAtOnceWhileStepsRunOn) {
  ASSERT_EQ(geteuid(), 0u) << "dropping to the job's user needs root";
  support::TempDir tmp("accel-surrogate");
  const std::string dir = tmp.path();
  chmod(dir.c_str(), 0777);
  const std::string fake = dir + "/srun";
  std::ofstream(fake) << "#!/bin/sh\necho $$ > " << dir << "/pid.tmp\nmv " << dir << "/pid.tmp "
                      << dir << "/pid\nexec sleep 30\n";
  chmod(fake.c_str(), 0755);
  std::atomic<int> reported{0};
  pid_t srun = -1;
  const auto before = std::chrono::steady_clock::now();
  {
    SurrogateSteps steps(
        SurrogateOptions{.srun = fake, .accelctl = "w", .config_path = "c", .slurm_conf = ""},
        [&](const SurrogateSpec&, int) { ++reported; });
    steps.launch(SurrogateSpec{.job_id = 8,
                               .uid = 65534,
                               .gid = 65534,
                               .user = "nobody",
                               .appliance_job = "wsjob-b",
                               .step_name = "wsjob-b"});
    EXPECT_EQ(steps.waiting(), 1u);
    for (int i = 0; i < 500 && srun < 0; ++i) {
      std::ifstream in(dir + "/pid");
      if (!(in >> srun)) srun = -1;
      if (srun < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GT(srun, 0);
  }
  // The destructor neither waited for the step nor reported it.
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(20));
  EXPECT_EQ(kill(srun, 0), 0) << "the step runs on";
  EXPECT_EQ(reported.load(), 0);
  kill(srun, SIGKILL);
  waitpid(srun, nullptr, 0);
  ASSERT_TRUE(tmp.remove());
}

ProcessFacts goodFacts(const SurrogateOptions& o, const SurrogateSpec& s) {
  return ProcessFacts{.argv = surrogateArgv(o, s),
                      .real_uid = s.uid,
                      .effective_uid = s.uid,
                      .start_ns = 2'000'000'000'000,
                      .cgroup = "0::/system.slice/accel-agentd.service\n"};
}

TEST(SurrogateStepsTest, AdoptionWantsTheJobUsersProcessStartedInTheJobAndTheDaemonsCgroup) {
  SurrogateOptions o{.srun = "/usr/bin/srun",
                     .accelctl = "/opt/accelctl",
                     .config_path = "/etc/a.conf",
                     .slurm_conf = ""};
  SurrogateSpec s{.job_id = 65,
                  .uid = 1000,
                  .gid = 1000,
                  .user = "u",
                  .appliance_job = "wsjob-a",
                  .step_name = "wsjob-a"};
  const AdoptCheck check{.not_before_ns = 1'990'000'000'000,
                         .not_after_ns = 2'010'000'000'000,
                         .cgroup = "0::/system.slice/accel-agentd.service\n"};
  EXPECT_EQ(whyNotSurrogateSrun(goodFacts(o, s), o, s, check), "");

  auto p = goodFacts(o, s);
  p.argv.back() = "wsjob-b";
  EXPECT_EQ(whyNotSurrogateSrun(p, o, s, check), "not the step's srun command line");
  // Another user who copied the command line, also through a setuid program.
  p = goodFacts(o, s);
  p.real_uid = p.effective_uid = 1001;
  EXPECT_NE(whyNotSurrogateSrun(p, o, s, check).find("not the job user's 1000"), std::string::npos);
  p = goodFacts(o, s);
  p.effective_uid = 0;
  EXPECT_NE(whyNotSurrogateSrun(p, o, s, check), "");
  // Started before the job was ready here (beyond the clock's slack), or
  // after the daemon looked, or with no readable start time.
  p = goodFacts(o, s);
  p.start_ns = check.not_before_ns - kAdoptClockSlackNs - 1;
  EXPECT_EQ(whyNotSurrogateSrun(p, o, s, check), "started before the job was ready here");
  p.start_ns = check.not_before_ns - kAdoptClockSlackNs + 1;
  EXPECT_EQ(whyNotSurrogateSrun(p, o, s, check), "");
  p.start_ns = check.not_after_ns + kAdoptClockSlackNs + 1;
  EXPECT_EQ(whyNotSurrogateSrun(p, o, s, check), "started after this daemon looked");
  p.start_ns = 0;
  EXPECT_EQ(whyNotSurrogateSrun(p, o, s, check), "start time unknown");
  // A record from before ready times were kept: no lower bound.
  p = goodFacts(o, s);
  p.start_ns = 5;
  EXPECT_EQ(whyNotSurrogateSrun(p, o, s,
                                AdoptCheck{.not_before_ns = 0,
                                           .not_after_ns = check.not_after_ns,
                                           .cgroup = check.cgroup}),
            "");
  // A user's own process, in the user's session or job cgroup.
  p = goodFacts(o, s);
  p.cgroup = "0::/user.slice/user-1000.slice/session-4.scope\n";
  EXPECT_EQ(whyNotSurrogateSrun(p, o, s, check), "in another cgroup than the daemon's");
}

// Starts the test binary as a stand-in srun (kActsAsSrun) with the command
// line of spec's step.
pid_t startStandIn(const SurrogateOptions& o, const SurrogateSpec& s) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return -1;
  exe[n] = '\0';
  std::vector<std::string> args = surrogateArgv(o, s);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  char env_var[] = "ACCEL_TEST_ACT_AS_SRUN=1";
  char* envp[] = {env_var, nullptr};
  pid_t pid = fork();
  if (pid == 0) {
    execve(exe, argv.data(), envp);
    _exit(127);
  }
  return pid;
}

// Waits until the stand-in shows the command line it was given.
bool showsItsCommandLine(pid_t pid, const std::string& last_arg) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (all.size() > last_arg.size() + 1 &&
        all.compare(all.size() - last_arg.size() - 1, last_arg.size(), last_arg) == 0)
      return true;
    usleep(10'000);
  }
  return false;
}

// After a restart: a process with the step's command line is adopted only
// when it runs as the job's user. One of another user is left alone (the
// step counts as gone), so killing it ends nobody's appliance job.
TEST(SurrogateStepsTest, AdoptFollowsTheJobUsersSrunAndLeavesACopyOfAnotherUserAlone) {
  const SurrogateOptions o{.srun = "/nonexistent/srun",
                           .accelctl = "/opt/accelctl",
                           .config_path = "/etc/a.conf",
                           .slurm_conf = ""};
  const auto now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const int64_t ready_ns = now_ns() - 1'000'000'000;
  SurrogateSpec mine{.job_id = 91,
                     .uid = getuid(),
                     .gid = getgid(),
                     .user = "me",
                     .appliance_job = "wsjob-91",
                     .step_name = "wsjob-91"};
  pid_t srun = startStandIn(o, mine);
  ASSERT_GT(srun, 0);
  ASSERT_TRUE(showsItsCommandLine(srun, "wsjob-91"));

  std::mutex mu;
  std::condition_variable cv;
  std::vector<uint32_t> ended;
  SurrogateSteps steps(o, [&](const SurrogateSpec& spec, int st) {
    EXPECT_EQ(st, -1);
    std::lock_guard<std::mutex> g(mu);
    ended.push_back(spec.job_id);
    cv.notify_all();
  });
  // The same command line, but the job is another user's.
  SurrogateSpec theirs = mine;
  theirs.uid = getuid() + 4242;
  steps.adopt(theirs, ready_ns, /*gone_means_ended=*/true);
  {
    std::unique_lock<std::mutex> lk(mu);
    ASSERT_TRUE(cv.wait_for(lk, std::chrono::seconds(10), [&] { return ended.size() == 1; }));
  }
  // The job user's own: followed until it ends.
  steps.adopt(mine, ready_ns, /*gone_means_ended=*/true);
  {
    std::unique_lock<std::mutex> lk(mu);
    EXPECT_FALSE(cv.wait_for(lk, std::chrono::milliseconds(300), [&] { return ended.size() > 1; }));
  }
  // Not when the job became ready after the process started.
  SurrogateSteps later(o, [&](const SurrogateSpec&, int) {
    std::lock_guard<std::mutex> g(mu);
    ended.push_back(0);
    cv.notify_all();
  });
  later.adopt(mine, now_ns() + 2 * kAdoptClockSlackNs, /*gone_means_ended=*/true);
  {
    std::unique_lock<std::mutex> lk(mu);
    ASSERT_TRUE(cv.wait_for(lk, std::chrono::seconds(10), [&] { return ended.size() == 2; }));
    EXPECT_EQ(ended[1], 0u);
  }
  kill(srun, SIGKILL);
  int status = 0;
  waitpid(srun, &status, 0);
  std::unique_lock<std::mutex> lk(mu);
  ASSERT_TRUE(cv.wait_for(lk, std::chrono::seconds(10), [&] { return ended.size() == 3; }));
  EXPECT_EQ(ended[2], 91u);
}

}  // namespace
}  // namespace accel::agentd
