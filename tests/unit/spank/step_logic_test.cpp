#include "accel/spank/step_logic.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>

namespace accel::spank {
namespace {

DaemonReply ready(std::vector<std::pair<std::string, std::string>> env) {
  DaemonReply r;
  r.outcome = Outcome::kOk;
  r.job = JobView{};
  r.job->state = "Ready";
  r.job->env = std::move(env);
  return r;
}

DaemonReply failed(const std::string& why) {
  DaemonReply r = ready({});
  r.job->failed = true;
  r.job->state = "Failed";
  r.job->last_error = why;
  return r;
}

DaemonReply outcome(Outcome o, const std::string& message) {
  DaemonReply r;
  r.outcome = o;
  r.message = message;
  return r;
}

const Error kDown(ErrorCode::kUnavailable,
                  "accel-agentd is not running (no listener on /run/a.sock)");

TEST(DescribeAsk, FirstOptionInUsersWords) {
  RawOptions r;
  EXPECT_EQ(describeAsk(r, ""), "");
  EXPECT_EQ(describeAsk(r, "0,1"), "GPUs (SLURM_JOB_GPUS=0,1)");
  r.appliance_signal = "USR1";
  EXPECT_EQ(describeAsk(r, ""), "--appliance-signal=USR1");
  r.job_time_sec = "60";
  EXPECT_EQ(describeAsk(r, ""), "--job-time-sec=60");
  r.appliance_time = "10";
  EXPECT_EQ(describeAsk(r, ""), "--appliance-time=10");
  r.num_replicas = "2";
  EXPECT_EQ(describeAsk(r, ""), "--num-replicas=2");
  r.ipus = "4";
  EXPECT_EQ(describeAsk(r, "0"), "--ipus=4");
}

TEST(DecideStep, ReadyJobGetsItsEnvironment) {
  auto d =
      decideStep(42, "", ready({{"ACCEL_JOB_DIR", "/run/j/42"}, {"IPUOF_VIPU_API_PORT", "8090"}}));
  EXPECT_FALSE(d.refusal);
  EXPECT_FALSE(d.note);
  ASSERT_EQ(d.env.size(), 2u);
  EXPECT_EQ(d.env[1].second, "8090");
}

// The daemon's lines for the job's output are passed on, bounded and printable.
TEST(DecideStep, WarningsForTheJobsOutputAreBoundedAndPrintable) {
  DaemonReply r = ready({});
  r.job->warnings = {"the appliance time limit of 6 s cannot be measured on n1",
                     "two\nlines\x1b[31m",
                     std::string(2000, 'w'),
                     "4",
                     "5",
                     "6"};
  auto d = decideStep(42, "--job-time-sec=6", r);
  EXPECT_FALSE(d.refusal);
  ASSERT_EQ(d.warnings.size(), kMaxStepWarnings);
  EXPECT_EQ(d.warnings[0], "the appliance time limit of 6 s cannot be measured on n1");
  EXPECT_EQ(d.warnings[1], "two lines [31m");
  EXPECT_EQ(d.warnings[2].size(), kMaxStepWarningBytes);
  EXPECT_EQ(d.warnings[3], "4");
}

TEST(DecideStep, InvalidNamesAreSkippedWithANote) {
  auto d = decideStep(42, "--ipus=4", ready({{"A=B", "x"}, {"GOOD", "1"}}));
  ASSERT_EQ(d.env.size(), 1u);
  EXPECT_EQ(d.env[0].first, "GOOD");
  EXPECT_TRUE(d.note);
  EXPECT_FALSE(d.refusal);
}

TEST(DecideStep, FailedJobIsRefusedWithTheDaemonsReason) {
  for (const std::string asked : {"", "--ipus=4"}) {
    auto d = decideStep(42, asked, failed("vipu: partition p42 not created: no free IPUs"));
    ASSERT_TRUE(d.refusal);
    EXPECT_EQ(*d.refusal, "job 42: vipu: partition p42 not created: no free IPUs");
    EXPECT_TRUE(d.env.empty());
  }
  auto d = decideStep(42, "", failed(""));
  ASSERT_TRUE(d.refusal);
  EXPECT_EQ(*d.refusal, "job 42: this node could not prepare the job");
}

TEST(DecideStep, UnknownJobIsIgnoredSilently) {
  for (const std::string asked : {"", "--ipus=4"}) {
    auto d = decideStep(42, asked, outcome(Outcome::kNotFound, "job 42 has nothing on this node"));
    EXPECT_FALSE(d.refusal);
    EXPECT_FALSE(d.note);
    EXPECT_TRUE(d.env.empty());
  }
}

TEST(DecideStep, UnreachableDaemonOnlyMattersToJobsThatAsked) {
  auto quiet = decideStep(42, "", Result<DaemonReply>(kDown));
  EXPECT_FALSE(quiet.refusal);
  ASSERT_TRUE(quiet.note);
  EXPECT_NE(quiet.note->find("asked for nothing"), std::string::npos);
  auto loud = decideStep(42, "--appliance-time=10", Result<DaemonReply>(kDown));
  ASSERT_TRUE(loud.refusal);
  EXPECT_EQ(*loud.refusal,
            "job 42: accel-agentd cannot be reached: accel-agentd is not running (no listener on "
            "/run/a.sock); "
            "the job asked for --appliance-time=10 and cannot run without it");
}

TEST(DecideStep, OtherOutcomesAreTrouble) {
  for (Outcome o : {Outcome::kPermissionDenied, Outcome::kBadRequest, Outcome::kNodeFault,
                    Outcome::kBusy, Outcome::kUserError, Outcome::kUnknown}) {
    auto d = decideStep(42, "--ipus=4", outcome(o, "nope"));
    ASSERT_TRUE(d.refusal) << outcomeName(o);
    EXPECT_NE(d.refusal->find(std::string("accel-agentd answered ") + outcomeName(o) + ": nope"),
              std::string::npos)
        << *d.refusal;
    auto q = decideStep(42, "", outcome(o, "nope"));
    EXPECT_FALSE(q.refusal) << outcomeName(o);
    EXPECT_TRUE(q.note);
  }
  // Ok without a JobInfo is not a usable answer either.
  auto d = decideStep(42, "--ipus=4", outcome(Outcome::kOk, ""));
  EXPECT_TRUE(d.refusal);
}

TEST(IsValidEnvName, Rules) {
  EXPECT_TRUE(isValidEnvName("ACCEL_JOB_DIR"));
  EXPECT_FALSE(isValidEnvName(""));
  EXPECT_FALSE(isValidEnvName("A=B"));
  EXPECT_FALSE(isValidEnvName(std::string("A\0B", 3)));
}

int exited(int code) { return code << 8; }  // the wait status of exit(code)

TEST(FoldExitCode, LargestWinsSignalsCountAs128Plus) {
  EXPECT_TRUE(WIFEXITED(exited(3)));
  EXPECT_EQ(foldExitCode(0, exited(0)), 0);
  EXPECT_EQ(foldExitCode(0, exited(3)), 3);
  EXPECT_EQ(foldExitCode(3, exited(1)), 3);
  EXPECT_EQ(foldExitCode(3, SIGKILL), 128 + SIGKILL);
  EXPECT_EQ(foldExitCode(200, SIGTERM), 200);
}

TEST(IpuofConfigForTask, EachTaskGetsItsOwnGcd) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"IPUOF_CONFIG_PATH", "/ipuof/7/ipuof-gcd0.conf"},
      {"ACCEL_IPUOF_DIR", "/ipuof/7"},
      {"ACCEL_IPUOF_GCDS", "2"}};
  EXPECT_EQ(ipuofConfigForTask(env, 0), "/ipuof/7/ipuof-gcd0.conf");
  EXPECT_EQ(ipuofConfigForTask(env, 1), "/ipuof/7/ipuof-gcd1.conf");
  EXPECT_EQ(ipuofConfigForTask(env, 2), "/ipuof/7/ipuof-gcd0.conf")
      << "more tasks than GCDs wrap around";
}

TEST(IpuofConfigForTask, NothingToChangeWithOneGcdOrNoIpus) {
  EXPECT_EQ(ipuofConfigForTask({{"ACCEL_IPUOF_DIR", "/ipuof/7"}, {"ACCEL_IPUOF_GCDS", "1"}}, 3),
            "");
  EXPECT_EQ(ipuofConfigForTask({{"ACCEL_JOB_DIR", "/run/jobs/7"}}, 0), "");
  EXPECT_EQ(ipuofConfigForTask({{"ACCEL_IPUOF_DIR", "/ipuof/7"}, {"ACCEL_IPUOF_GCDS", "2x"}}, 1),
            "");
  EXPECT_EQ(ipuofConfigForTask({{"ACCEL_IPUOF_GCDS", "4"}}, 1), "");
}

}  // namespace
}  // namespace accel::spank
