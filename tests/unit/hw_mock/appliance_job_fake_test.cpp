// fake-appliance-job: the launcher a job script runs. It is followed through
// csctl, the way the agent will see it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <thread>

#include "fake_runner.h"

namespace accel::hw_mock {
namespace {

using nlohmann::json;
using test::FakeEnv;
using test::RunResult;

constexpr double kPatience = 30.0;  // seconds; far beyond any state change here

std::vector<std::string> launch(const std::string& csx, const std::string& queue,
                                const std::string& run, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--csx", csx, "--queue-seconds", queue, "--run-seconds", run};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

json jobsOf(const FakeEnv& env, const std::string& slurm_job) {
  RunResult r =
      env.run(FAKE_CSCTL, {"get", "jobs", "-o", "json", "-l", "slurm-job-id=" + slurm_job});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out)["items"];
}

// Polls csctl until the job of `slurm_job` has `state` (or time runs out).
json waitForState(const FakeEnv& env, const std::string& slurm_job, const std::string& state) {
  const double deadline = test::monoSeconds() + kPatience;
  while (test::monoSeconds() < deadline) {
    json items = jobsOf(env, slurm_job);
    if (!items.empty() && items[0]["state"] == state) return items[0];
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "job of Slurm job " << slurm_job << " never reached " << state;
  return json::object();
}

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

TEST(FakeApplianceJob, QueuesRunsAndSucceeds) {
  FakeEnv env;
  test::Process p =
      env.start(FAKE_APPLIANCE_JOB, launch("1", "1.5", "1.5"), {{"SLURM_JOB_ID", "65"}});
  std::vector<std::string> seen;
  const double deadline = test::monoSeconds() + kPatience;
  while (test::monoSeconds() < deadline && (seen.empty() || seen.back() != "SUCCEEDED")) {
    json items = jobsOf(env, "65");
    ASSERT_LE(items.size(), 1u);
    std::string state = items.empty() ? "" : items[0]["state"].get<std::string>();
    if (!state.empty() && (seen.empty() || seen.back() != state)) seen.push_back(state);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"QUEUED", "RUNNING", "SUCCEEDED"}));
  RunResult r = test::wait(p);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json job = jobsOf(env, "65")[0];
  EXPECT_EQ(firstLine(r.out), job["name"].get<std::string>());
  EXPECT_NE(r.out.find(job["name"].get<std::string>() + " SUCCEEDED"), std::string::npos) << r.out;
  EXPECT_EQ(job["type"], "execute");
  EXPECT_EQ(job["systems"], 1);
  EXPECT_FALSE(job["user"].get<std::string>().empty());
  EXPECT_EQ(job["uid"], ::getuid());  // the submitter, as the appliance knows it
  EXPECT_LT(job["createTime"].get<std::string>(), job["startTime"].get<std::string>());
  EXPECT_LT(job["startTime"].get<std::string>(), job["endTime"].get<std::string>());
}

TEST(FakeApplianceJob, FailExitsOne) {
  FakeEnv env;
  RunResult r =
      env.run(FAKE_APPLIANCE_JOB, launch("2", "0", "0.1", {"--fail"}), {{"SLURM_JOB_ID", "66"}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("FAILED"), std::string::npos) << r.out;
  EXPECT_EQ(jobsOf(env, "66")[0]["state"], "FAILED");
}

TEST(FakeApplianceJob, CompileJobHoldsNoSystemsAndFractionalTimesAreHonoured) {
  FakeEnv env;
  double t0 = test::monoSeconds();
  RunResult r = env.run(FAKE_APPLIANCE_JOB, launch("0", "0.2", "0.3"), {{"SLURM_JOB_ID", "67"}});
  EXPECT_GE(test::monoSeconds() - t0, 0.5);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json job = jobsOf(env, "67")[0];
  EXPECT_EQ(job["type"], "compile");
  EXPECT_EQ(job["systems"], 0);
}

TEST(FakeApplianceJob, CsctlCancelEndsTheLauncherWithTwo) {
  FakeEnv env;
  test::Process p =
      env.start(FAKE_APPLIANCE_JOB, launch("1", "0", "600"), {{"SLURM_JOB_ID", "68"}});
  json job = waitForState(env, "68", "RUNNING");
  RunResult c = env.run(FAKE_CSCTL, {"cancel", "job", job.value("name", "")});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  RunResult r = test::wait(p);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("CANCELLED"), std::string::npos) << r.out;
}

TEST(FakeApplianceJob, SigtermCancelsItsOwnJob) {
  for (int sig : {SIGTERM, SIGINT}) {
    FakeEnv env;
    test::Process p =
        env.start(FAKE_APPLIANCE_JOB, launch("1", "600", "600"), {{"SLURM_JOB_ID", "69"}});
    waitForState(env, "69", "QUEUED");
    ::kill(p.pid, sig);
    RunResult r = test::wait(p);
    EXPECT_EQ(r.exit_code, 2) << "signal " << sig;
    EXPECT_NE(r.out.find("CANCELLED"), std::string::npos) << r.out;
    json job = jobsOf(env, "69")[0];
    EXPECT_EQ(job["state"], "CANCELLED");
    EXPECT_TRUE(job["startTime"].is_null());
  }
}

// --detach: the launcher prints the id and leaves; the appliance job runs on
// until it ends or is cancelled.
TEST(FakeApplianceJob, DetachLeavesTheJobRunning) {
  FakeEnv env;
  RunResult r =
      env.run(FAKE_APPLIANCE_JOB, launch("1", "0", "60", {"--detach"}), {{"SLURM_JOB_ID", "73"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json job = waitForState(env, "73", "RUNNING");
  EXPECT_EQ(firstLine(r.out), job.value("name", ""));
  RunResult c = env.run(FAKE_CSCTL, {"cancel", "job", job.value("name", "")});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  waitForState(env, "73", "CANCELLED");
}

TEST(FakeApplianceJob, NeedsASlurmJobId) {
  FakeEnv env;
  RunResult r = env.run(FAKE_APPLIANCE_JOB, launch("1", "0", "0"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("SLURM_JOB_ID"), std::string::npos) << r.err;
  RunResult all = env.run(FAKE_CSCTL, {"get", "jobs", "-o", "json"});
  EXPECT_TRUE(json::parse(all.out)["items"].empty());

  RunResult labelled =
      env.run(FAKE_APPLIANCE_JOB,
              launch("1", "0", "0", {"--label", "slurm-job-id=70", "--label", "model=gpt2"}));
  EXPECT_EQ(labelled.exit_code, 0) << labelled.err;
  json job = jobsOf(env, "70")[0];
  EXPECT_EQ(job["labels"]["model"], "gpt2");
}

TEST(FakeApplianceJob, BadArgumentsExitTwo) {
  FakeEnv env;
  const std::map<std::string, std::string> slurm = {{"SLURM_JOB_ID", "71"}};
  for (const auto& args :
       {launch("1", "-1", "0"), launch("1.5", "0", "0"), launch("1", "x", "0"),
        launch("1", "0", "0", {"--label", "novalue"}), launch("1", "0", "0", {"--bogus"}),
        std::vector<std::string>{"--csx", "1"}}) {
    EXPECT_EQ(env.run(FAKE_APPLIANCE_JOB, args, slurm).exit_code, 2);
  }
  EXPECT_TRUE(jobsOf(env, "71").empty());
}

TEST(FakeApplianceJob, RecordsAreSharedFilesInAStickyDirectory) {
  FakeEnv env;
  RunResult r = env.run(FAKE_APPLIANCE_JOB, launch("1", "0", "0"), {{"SLURM_JOB_ID", "72"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat dir {
  }, file{};
  ASSERT_EQ(::stat((env.root() + "/appliance/jobs").c_str(), &dir), 0);
  EXPECT_EQ(dir.st_mode & 07777, 01777u);
  std::string path = env.root() + "/appliance/jobs/" + firstLine(r.out) + ".json";
  ASSERT_EQ(::stat(path.c_str(), &file), 0) << path;
  EXPECT_EQ(file.st_mode & 07777, 0644u);
  EXPECT_NE(env.read("appliance/calls.log").find("fake-appliance-job --csx 1"), std::string::npos);
}

}  // namespace
}  // namespace accel::hw_mock
