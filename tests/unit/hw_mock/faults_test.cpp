// The fault file: its parser on literal text, and each action as the fakes
// carry it out.
#include "faults.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "fake_runner.h"

namespace accel::hw_mock {
namespace {

using test::FakeEnv;
using test::RunResult;

TEST(FaultParser, ReadsEveryActionCommentsAndOnce) {
  auto rules = parseFaults(
      "# leading comment\n"
      "\n"
      "create fail\n"
      "remove fail 7 once   # trailing comment\n"
      "list down\n"
      "get hang once\n"
      "* delay 250\n"
      "get-jobs garbage once\n");
  ASSERT_TRUE(rules.ok()) << rules.error().message();
  ASSERT_EQ(rules->size(), 6u);
  EXPECT_EQ((*rules)[0].op, "create");
  EXPECT_EQ((*rules)[0].action, FaultAction::kFail);
  EXPECT_EQ((*rules)[0].exit_code, 1);
  EXPECT_FALSE((*rules)[0].once);
  EXPECT_EQ((*rules)[1].exit_code, 7);
  EXPECT_TRUE((*rules)[1].once);
  EXPECT_EQ((*rules)[1].line, 4);
  EXPECT_EQ((*rules)[1].text, "remove fail 7 once");
  EXPECT_EQ((*rules)[2].action, FaultAction::kDown);
  EXPECT_EQ((*rules)[3].action, FaultAction::kHang);
  EXPECT_EQ((*rules)[4].op, "*");
  EXPECT_EQ((*rules)[4].delay_ms, 250);
  EXPECT_EQ((*rules)[5].action, FaultAction::kGarbage);
  EXPECT_TRUE((*rules)[5].once);
}

TEST(FaultParser, RejectsMalformedLinesNamingTheLine) {
  for (const char* text :
       {"create\n", "ok\ncreate explode\n", "list delay\n", "list delay x\n", "create fail 0\n",
        "create fail 300\n", "create down now\n", "list delay 5 once extra\n"}) {
    auto rules = parseFaults(text);
    ASSERT_FALSE(rules.ok()) << text;
    EXPECT_NE(rules.error().message().find("faults line"), std::string::npos) << text;
  }
  auto second = parseFaults("# fine\ncreate explode\n");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message().find("line 2"), std::string::npos);
}

TEST(FaultParser, EmptyFileHasNoRules) {
  auto rules = parseFaults("");
  ASSERT_TRUE(rules.ok());
  EXPECT_TRUE(rules->empty());
}

TEST(Faults, FailUsesDefaultOrGivenExitCodeAndOnlyItsOp) {
  FakeEnv env;
  env.write("vipu/faults", "create fail\nremove fail 7\n");
  RunResult r = env.run(FAKE_VIPU, {"create", "partition", "p1", "--size", "2"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.err.starts_with("Error:")) << r.err;
  EXPECT_EQ(env.run(FAKE_VIPU, {"remove", "partition", "p1"}).exit_code, 7);
  r = env.run(FAKE_VIPU, {"list", "partitions", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).size(), 0u);  // the failed create changed nothing
}

TEST(Faults, OnceFiresOnlyOnceThenLaterRulesApply) {
  FakeEnv env;
  env.write("vipu/faults", "create fail 5 once\ncreate fail 6 once\n");
  const std::vector<std::string> create = {"create", "partition", "p1", "--size", "2"};
  EXPECT_EQ(env.run(FAKE_VIPU, create).exit_code, 5);
  EXPECT_EQ(env.run(FAKE_VIPU, create).exit_code, 6);
  RunResult r = env.run(FAKE_VIPU, create);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(Faults, DownSaysConnectionRefused) {
  FakeEnv env;
  env.write("vipu/faults", "list down\n");
  RunResult r = env.run(FAKE_VIPU, {"--api-host", "ctl0", "list", "partitions"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("connection refused"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ctl0"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(Faults, HangRunsUntilKilledAndOnceReleasesTheNextCall) {
  FakeEnv env;
  env.write("vipu/faults", "* hang once\n");
  test::Process p = env.start(FAKE_VIPU, {"list", "partitions"});
  EXPECT_TRUE(test::stillRunningAfter(p, 0.5));
  ::kill(p.pid, SIGTERM);
  RunResult r = test::wait(p);
  EXPECT_EQ(r.signal, SIGTERM);
  RunResult again = env.run(FAKE_VIPU, {"list", "partitions"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

TEST(Faults, DelayWaitsThenBehavesNormally) {
  FakeEnv env;
  env.write("vipu/faults", "create delay 400\n");
  double t0 = test::monoSeconds();
  RunResult r = env.run(FAKE_VIPU, {"create", "partition", "p1", "--size", "2"});
  EXPECT_GE(test::monoSeconds() - t0, 0.4);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(env.read("vipu/partitions.json").find("p1"), std::string::npos);
}

TEST(Faults, GarbageIsUnparseableOutputWithExitZero) {
  FakeEnv env;
  EXPECT_EQ(env.run(FAKE_VIPU, {"create", "partition", "p1", "--size", "2"}).exit_code, 0);
  env.write("vipu/faults", "get garbage\nlist garbage\n");
  RunResult get = env.run(FAKE_VIPU, {"get", "partition", "p1", "--ipu-configs"});
  EXPECT_EQ(get.exit_code, 0);
  EXPECT_FALSE(get.out.empty());
  EXPECT_FALSE(nlohmann::json::accept(get.out)) << get.out;
  RunResult list = env.run(FAKE_VIPU, {"list", "partitions", "--json"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_FALSE(nlohmann::json::accept(list.out)) << list.out;

  env.write("appliance/faults", "get-jobs garbage\n");
  RunResult jobs = env.run(FAKE_CSCTL, {"get", "jobs", "-o", "json"});
  EXPECT_EQ(jobs.exit_code, 0);
  EXPECT_FALSE(jobs.out.empty());
  EXPECT_FALSE(nlohmann::json::accept(jobs.out)) << jobs.out;
}

TEST(Faults, WildcardCoversEveryCsctlOp) {
  FakeEnv env;
  env.write("appliance/faults", "* down\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"get", "jobs", "-o", "json"},
        std::vector<std::string>{"cancel", "job", "wsjob-aaaaaaaaaaaaaaaaaaaaaa"}}) {
    RunResult r = env.run(FAKE_CSCTL, args);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("connection refused"), std::string::npos) << r.err;
  }
}

TEST(Faults, SubmitFaultStopsTheLauncherBeforeItCreatesARecord) {
  FakeEnv env;
  env.write("appliance/faults", "submit fail 4\n");
  RunResult r =
      env.run(FAKE_APPLIANCE_JOB, {"--csx", "1", "--queue-seconds", "0", "--run-seconds", "0"},
              {{"SLURM_JOB_ID", "9"}});
  EXPECT_EQ(r.exit_code, 4);
  RunResult jobs = env.run(FAKE_CSCTL, {"get", "jobs", "-o", "json"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_TRUE(nlohmann::json::parse(jobs.out)["items"].empty());
}

TEST(Faults, MalformedFaultFileIsReportedNotIgnored) {
  FakeEnv env;
  env.write("vipu/faults", "list sometimes\n");
  RunResult r = env.run(FAKE_VIPU, {"list", "partitions"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("faults line 1"), std::string::npos) << r.err;
}

TEST(Faults, EveryCallIsLoggedEvenWhenAFaultFires) {
  FakeEnv env;
  env.write("vipu/faults", "remove down\n");
  (void)env.run(FAKE_VIPU, {"create", "partition", "p1", "--size", "2"});
  (void)env.run(FAKE_VIPU, {"remove", "partition", "p1"});
  EXPECT_EQ(env.read("vipu/calls.log"),
            "vipu create partition p1 --size 2\nvipu remove partition p1\n");
}

}  // namespace
}  // namespace accel::hw_mock
