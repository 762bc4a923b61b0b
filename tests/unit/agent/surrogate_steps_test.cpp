// Surrogate steps: the step's name and command line, and the launch as the
// job's user (a stand-in for srun records who ran it and with what).
#include "accel/agentd/surrogate_steps.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>

#include <gtest/gtest.h>

#include "accel/agentd/control_handler.h"
#include "accel/common/safe_file.h"

namespace accel::agentd {
namespace {

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
  SurrogateOptions o{.srun = "/usr/bin/srun", .accelctl = "/opt/accelctl", .config_path = "/etc/a.conf", .slurm_conf = ""};
  SurrogateSpec s{.job_id = 65, .uid = 1, .gid = 1, .user = "u", .appliance_job = "wsjob-a", .step_name = "wsjob-a-csx1"};
  EXPECT_EQ(surrogateArgv(o, s),
            (std::vector<std::string>{"/usr/bin/srun", "--jobid=65", "--overlap", "-J", "wsjob-a-csx1", "--ntasks=1",
                                      "--nodes=1", "--quiet", "/opt/accelctl", "--config", "/etc/a.conf",
                                      "wait-appliance", "65", "wsjob-a"}));
}

TEST(SurrogateStepsTest, LaunchRunsAsTheJobsUserAndReportsTheEnd) {
  ASSERT_EQ(geteuid(), 0u) << "dropping to the job's user needs root";
  char tmpl[] = "/tmp/accel-surrogate-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  chmod(dir.c_str(), 0777);
  const std::string fake = dir + "/srun";
  std::ofstream(fake) << "#!/bin/sh\necho \"$(id -u) $(id -g) $SLURM_CONF $*\" > " << dir << "/ran\nexit 3\n";
  chmod(fake.c_str(), 0755);
  std::mutex mu;
  std::condition_variable cv;
  int status = -2;
  {
    SurrogateSteps steps(SurrogateOptions{.srun = fake, .accelctl = "w", .config_path = "c", .slurm_conf = "/s.conf"},
                         [&](const SurrogateSpec& spec, int st) {
                           EXPECT_EQ(spec.appliance_job, "wsjob-a");
                           std::lock_guard<std::mutex> g(mu);
                           status = st;
                           cv.notify_all();
                         });
    steps.launch(SurrogateSpec{.job_id = 7, .uid = 65534, .gid = 65534, .user = "nobody",
                               .appliance_job = "wsjob-a", .step_name = "wsjob-a"});
    std::unique_lock<std::mutex> lk(mu);
    ASSERT_TRUE(cv.wait_for(lk, std::chrono::seconds(10), [&] { return status != -2; }));
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
  std::ifstream in(dir + "/ran");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "65534 65534 /s.conf --jobid=7 --overlap -J wsjob-a --ntasks=1 --nodes=1 --quiet w --config c "
                        "wait-appliance 7 wsjob-a\n");
  ASSERT_TRUE(removeTree(dir).ok());
}

}  // namespace
}  // namespace accel::agentd
