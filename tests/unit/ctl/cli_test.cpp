// accelctl's command line: --help on every verb names the verb's options,
// and errors say what to do next.
#include "accel/ctl/cli.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "accel/common/safe_file.h"
#include "accel/ctl/hints.h"
#include "temp_dir.h"

namespace accel::ctl {
namespace {

struct Run {
  int code = -1;
  std::string out, err;
};

Run run(const std::vector<std::string>& args, std::map<std::string, std::string> env = {}) {
  Run r;
  CliIo io{[&env](const char* n) -> const char* {
             auto it = env.find(n);
             return it == env.end() ? nullptr : it->second.c_str();
           },
           [&r](const std::string& s) { r.out += s; },
           [&r](const std::string& s) { r.err += s + "\n"; }};
  r.code = runCli(args, io);
  return r;
}

// What each verb's help must name: its options and arguments, as the docs use them.
const std::map<std::string, std::vector<std::string>> kExpected = {
    {"prolog", {"Prolog=", "SLURM_JOB_ID", "SLURM_JOB_GPUS", "drains"}},
    {"epilog", {"Epilog=", "SLURM_JOB_ID=ID accel-epilog", "Idempotent"}},
    {"status", {"--json", "health", "aggregator", "vendor"}},
    {"jobs", {"--json"}},
    {"job", {"ID", "--json", "Exit 5"}},
    {"topology", {"--xml FILE", "--json"}},
    {"events", {"--job ID", "--node NAME", "--follow", "--database PATH", "--json"}},
    {"report", {"ID", "--json", "Exit 5", "SlurmUser", "plain line"}},
    {"nodes", {"--database PATH", "--json", "alive", "late", "no-heartbeat", "HeartbeatInterval"}},
    {"wait-appliance", {"JOB", "ID", "surrogate"}},
    {"config", {"check [FILE]", "FILE:LINE"}},
    {"clear-fault", {"Xid", "SlurmUser", "state=resume", "accelctl status"}},
};

TEST(CliHelpTest, EveryVerbHasHelpNamingItsOptions) {
  ASSERT_EQ(verbNames().size(), kExpected.size())
      << "a verb was added: list what its help must name";
  for (const auto& verb : verbNames()) {
    SCOPED_TRACE(verb);
    ASSERT_EQ(kExpected.count(verb), 1u);
    for (const auto& form :
         {std::vector<std::string>{verb, "--help"}, std::vector<std::string>{"--help", verb},
          std::vector<std::string>{verb, "-h"}}) {
      auto r = run(form);
      EXPECT_EQ(r.code, 0);
      EXPECT_EQ(r.err, "");
      EXPECT_EQ(r.out.rfind("usage: accelctl [--config FILE] " + verb, 0), 0u) << r.out;
      for (const auto& word : kExpected.at(verb))
        EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << r.out;
      EXPECT_NE(r.out.find("--config FILE"), std::string::npos);
    }
  }
}

TEST(CliHelpTest, GeneralHelpListsEveryVerb) {
  auto r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const auto& verb : verbNames())
    EXPECT_NE(r.out.find("\n  " + verb + " "), std::string::npos) << verb;
  EXPECT_NE(r.out.find("exit codes: 0 ok, 1 node fault, 2 usage, 3 daemon not running"),
            std::string::npos);
}

TEST(CliErrorTest, UnknownVerbListsTheVerbs) {
  auto r = run({"stauts"});
  EXPECT_EQ(r.code, kUsage);
  EXPECT_EQ(r.err,
            "accelctl: unknown verb 'stauts'; the verbs are prolog epilog status jobs job topology "
            "events report "
            "nodes wait-appliance config clear-fault (see 'accelctl --help')\n");
  EXPECT_EQ(run({}).err, "accelctl: no verb given; see 'accelctl --help'\n");
}

class CliDaemonDownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(root_ + "/accel.conf") << "ControlSocket=" << root_ << "/control.sock\n";
  }
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }
  support::TempDir tmp_{"accel-cli"};
  std::string root_ = tmp_.path();
};

TEST_F(CliDaemonDownTest, SaysHowToStartTheDaemonAndWhereTheSocketIsExpected) {
  for (const auto& verb : {std::vector<std::string>{"status"}, std::vector<std::string>{"jobs"},
                           std::vector<std::string>{"job", "42"}}) {
    auto args = verb;
    args.insert(args.begin(), {"--config", root_ + "/accel.conf"});
    auto r = run(args);
    EXPECT_EQ(r.code, kUnavailable) << r.err;
    EXPECT_EQ(r.err, "accelctl: accel-agentd is not running: nothing listens on " + root_ +
                         "/control.sock (ControlSocket in " + root_ +
                         "/accel.conf). Start it with 'systemctl start accel-agentd'; 'journalctl "
                         "-u accel-agentd' "
                         "says why it stopped\n");
  }
}

TEST_F(CliDaemonDownTest, AMissingConfigSaysWhereItWasLookedFor) {
  auto r = run({"status"}, {{"SLURM_CONF", root_ + "/nowhere/slurm.conf"}});
  EXPECT_EQ(r.code, kUsage);
  EXPECT_NE(r.err.find(root_ + "/nowhere/accel.conf"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("set SLURM_CONF or give --config FILE"), std::string::npos) << r.err;
}

TEST(HintTest, EachCallErrorSaysWhatToDo) {
  EXPECT_NE(callErrorHint(Error(ErrorCode::kTimeout, "recv: timed out"), "/run/a.sock",
                          "/etc/slurm/accel.conf")
                .find("journalctl -u accel-agentd"),
            std::string::npos);
  EXPECT_EQ(callErrorHint(Error(ErrorCode::kUnavailable, "accel-agentd is busy (/run/a.sock)"),
                          "/run/a.sock", "c"),
            "accel-agentd is busy (/run/a.sock); try again in a moment");
  EXPECT_NE(
      callErrorHint(Error(ErrorCode::kPermissionDenied, "connect /run/a.sock: Permission denied"),
                    "/run/a.sock", "c")
          .find("check the permissions of /run/a.sock and of its directory"),
      std::string::npos);
  EXPECT_EQ(unknownJobHint("job 42 has nothing on this node"),
            "job 42 has nothing on this node; 'accelctl jobs' lists the jobs you may see here "
            "(users see only their "
            "own)");
}

}  // namespace
}  // namespace accel::ctl
