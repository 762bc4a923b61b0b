// IPU jobs through the whole daemon: accelctl prolog/epilog against
// accel-agentd, which drives the fake V-IPU client of tests/hw_mock.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "process_harness.h"
#include "process_util.h"

namespace accel::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

class IpuProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = h_.dir() + "/mock-state";
    ::setenv("ACCEL_HW_MOCK_STATE", state_.c_str(), 1);  // inherited by the daemon
    ipuof_ = h_.dir() + "/ipuof";
    write(h_.dir() + "/vipu.conf",
          "ApiHost=127.0.0.1\nApiPort=8090\nIpuofDir=" + ipuof_ + "\nApiTimeout=2\n");
    h_.writeConfig("HwMockDir=" ACCEL_HW_MOCK_BUILD "\n");
  }
  void TearDown() override { ::unsetenv("ACCEL_HW_MOCK_STATE"); }

  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  void faults(const std::string& rules) {
    std::filesystem::create_directories(state_ + "/vipu");
    write(state_ + "/vipu/faults", rules);
  }
  void startOrFail() { ASSERT_TRUE(h_.start()) << h_.startError(); }
  static bool exists(const std::string& p) {
    struct stat st {};
    return lstat(p.c_str(), &st) == 0;
  }

  // The partitions the fake controller holds, by name.
  std::map<std::string, json> partitions(const std::string& options = "") {
    std::string cmd = "ACCEL_HW_MOCK_STATE=" + state_ + " " ACCEL_HW_MOCK_BUILD "/bin/vipu " +
                      options + " list partitions --json";
    std::string out;
    if (FILE* f = ::popen(cmd.c_str(), "r")) {
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
      ::pclose(f);
    }
    std::map<std::string, json> byName;
    auto list = json::parse(out.empty() ? "[]" : out, nullptr, false);
    if (list.is_array())
      for (auto& p : list) byName[p["id"].get<std::string>()] = p;
    return byName;
  }

  std::map<std::string, std::string> ipuEnv(uint32_t job, const std::string& ipus,
                                            const std::string& ntasks) {
    auto env = AgentHarness::jobEnv(job, 4242);
    env["SPANK_ACCEL_IPUS"] = ipus;
    env["SPANK_ACCEL_NTASKS"] = ntasks;
    return env;
  }

  // The prolog environment of one node of a job that runs on sbn1 and sbn2.
  std::map<std::string, std::string> nodeEnv(uint32_t job, const std::string& node,
                                             const std::string& ntasks) {
    auto env = ipuEnv(job, "4", ntasks);
    env["SLURMD_NODENAME"] = node;
    env["SLURM_NODELIST"] = "sbn[1-2]";
    env["SLURM_JOB_NUM_NODES"] = "2";
    return env;
  }

  // Calls to the fake controller (every node's) that contain `text`.
  int calls(const std::string& text) {
    std::ifstream in(state_ + "/vipu/calls.log");
    int n = 0;
    for (std::string line; std::getline(in, line);)
      n += line.find(text) != std::string::npos ? 1 : 0;
    return n;
  }

  static std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // A second node on this machine: its own daemon, socket and IpuofDir, and
  // the same controller (ACCEL_HW_MOCK_STATE, inherited).
  void startSecondNode() {
    ipuof2_ = h2_.dir() + "/ipuof";
    write(h2_.dir() + "/vipu.conf",
          "ApiHost=127.0.0.1\nApiPort=8090\nIpuofDir=" + ipuof2_ + "\nApiTimeout=2\n");
    h2_.writeConfig("HwMockDir=" ACCEL_HW_MOCK_BUILD "\n");
    ASSERT_TRUE(h2_.start()) << h2_.startError();
  }

  AgentHarness h_{
      HarnessPaths{ACCEL_AGENTD, ACCEL_ACCELCTL, ACCEL_HW_MOCK_DIR "/topologies/ipa20.xml"}};
  AgentHarness h2_{
      HarnessPaths{ACCEL_AGENTD, ACCEL_ACCELCTL, ACCEL_HW_MOCK_DIR "/topologies/ipa20.xml"}};
  std::string state_;
  std::string ipuof_;
  std::string ipuof2_;
};

// One job on two nodes, both prologs at once (as slurmd runs them): the
// partition is made once, by the first node of the list, and both nodes
// write the IPUoF files of every GCD. Only the leader's epilog removes it.
TEST_F(IpuProcessTest, TwoNodesOfOneJobShareOnePartitionMadeOnce) {
  startOrFail();
  startSecondNode();
  RunResult leader, follower;
  std::thread t1([&] { follower = h2_.ctl({"prolog"}, nodeEnv(8130, "sbn2", "1")); });
  std::thread t2([&] { leader = h_.ctl({"prolog"}, nodeEnv(8130, "sbn1", "2")); });
  t1.join();
  t2.join();
  ASSERT_EQ(leader.exit_code, 0) << leader.err;
  ASSERT_EQ(follower.exit_code, 0) << follower.err;
  EXPECT_EQ(calls("create partition p8130"), 1);
  EXPECT_EQ(calls("remove partition p8130"), 0) << "nothing left over: no remove before the epilog";
  ASSERT_EQ(partitions().count("p8130"), 1u);
  EXPECT_EQ(partitions()["p8130"]["gcds"], 2) << "as many GCDs as the leader's tasks";
  for (int gcd : {0, 1}) {
    const std::string name = "/8130/ipuof-gcd" + std::to_string(gcd) + ".conf";
    std::string mine = slurp(ipuof_ + name), theirs = slurp(ipuof2_ + name);
    EXPECT_FALSE(mine.empty()) << name;
    EXPECT_EQ(mine, theirs) << name;
    struct stat st {};
    ASSERT_EQ(stat((ipuof2_ + name).c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 4242u);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  auto job = h2_.ctl({"job", "8130", "--json"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto env = json::parse(job.out)["env"];
  EXPECT_EQ(env["ACCEL_IPUOF_GCDS"], "2");
  EXPECT_EQ(env["IPUOF_VIPU_API_PARTITION_ID"], "p8130");
  EXPECT_EQ(env["IPUOF_CONFIG_PATH"], ipuof2_ + "/8130/ipuof-gcd0.conf");

  ASSERT_EQ(h2_.ctl({"epilog"}, nodeEnv(8130, "sbn2", "1")).exit_code, 0);
  EXPECT_EQ(partitions().count("p8130"), 1u) << "the follower's epilog leaves the partition";
  EXPECT_FALSE(exists(ipuof2_ + "/8130"));
  EXPECT_EQ(calls("remove partition p8130"), 0);
  ASSERT_EQ(h_.ctl({"epilog"}, nodeEnv(8130, "sbn1", "2")).exit_code, 0);
  EXPECT_EQ(calls("remove partition p8130"), 1) << "the leader's epilog, once";
  EXPECT_EQ(partitions().count("p8130"), 0u);
  EXPECT_FALSE(exists(ipuof_ + "/8130"));
}

// The leader's prolog never made the partition: the follower gives up
// within its share of HookTimeout (5 s here: 2.5 s), fails the job and keeps
// its node in service (exit 0), having made nothing.
TEST_F(IpuProcessTest, AFollowerWhoseLeaderNeverMadeThePartitionFailsTheJobNotTheNode) {
  startOrFail();
  auto start = std::chrono::steady_clock::now();
  auto p = h_.ctl({"prolog"}, nodeEnv(8131, "sbn2", "1"));
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.err.find("partition p8131 was not made by the job's first node sbn1 within 2.5 s"),
            std::string::npos)
      << p.err;
  EXPECT_NE(p.err.find("the node stays in service"), std::string::npos) << p.err;
  EXPECT_GE(took, 2500ms);
  EXPECT_LT(took, 4500ms) << "well inside HookTimeout";
  EXPECT_EQ(calls("create partition"), 0);
  EXPECT_EQ(calls("remove partition"), 0);
  EXPECT_FALSE(exists(ipuof_ + "/8131"));
  auto job = h_.ctl({"job", "8131", "--json"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(json::parse(job.out)["state"], "Failed") << job.out;
  ASSERT_EQ(h_.ctl({"epilog"}, nodeEnv(8131, "sbn2", "1")).exit_code, 0);
  EXPECT_EQ(calls("remove partition"), 0);
}

TEST_F(IpuProcessTest, PrologMakesThePartitionAndOneConfigPerGcd) {
  startOrFail();
  auto p = h_.ctl({"prolog"}, ipuEnv(8101, "4", "2"));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto parts = partitions();
  ASSERT_EQ(parts.count("p8101"), 1u);
  EXPECT_EQ(parts["p8101"]["size"], 4);
  EXPECT_EQ(parts["p8101"]["gcds"], 2);
  for (int gcd : {0, 1}) {
    std::string file = ipuof_ + "/8101/ipuof-gcd" + std::to_string(gcd) + ".conf";
    struct stat st {};
    ASSERT_EQ(stat(file.c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_uid, 4242u);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    std::ifstream in(file);
    auto cfg = json::parse(in, nullptr, false);
    ASSERT_FALSE(cfg.is_discarded()) << file;
    EXPECT_EQ(cfg["gcd_index"], gcd);
  }
  EXPECT_FALSE(exists(ipuof_ + "/8101/ipuof-gcd2.conf"));
  // The job's directory lives under IpuofDir, not the run directory.
  struct stat st {};
  ASSERT_EQ(stat((ipuof_ + "/8101").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4242u);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((ipuof_ + "/8101/accel.env").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(exists(h_.runDir() + "/jobs/8101"));
  auto job = h_.ctl({"job", "8101", "--json"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto env = json::parse(job.out)["env"];
  EXPECT_EQ(env["IPUOF_CONFIG_PATH"], ipuof_ + "/8101/ipuof-gcd0.conf");
  EXPECT_EQ(env["IPUOF_VIPU_API_HOST"], "127.0.0.1");
  EXPECT_EQ(env["IPUOF_VIPU_API_PORT"], "8090");
  EXPECT_EQ(env["IPUOF_VIPU_API_PARTITION_ID"], "p8101");
  EXPECT_EQ(env["ACCEL_IPUOF_GCDS"], "2");

  ASSERT_EQ(h_.ctl({"epilog"}, ipuEnv(8101, "4", "2")).exit_code, 0);
  EXPECT_EQ(partitions().count("p8101"), 0u);
  EXPECT_FALSE(exists(ipuof_ + "/8101"));
  // A second epilog finds nothing to do, and succeeds.
  EXPECT_EQ(h_.ctl({"epilog"}, ipuEnv(8101, "4", "2")).exit_code, 0);
}

TEST_F(IpuProcessTest, ControllerDownFailsThePrologCleanlyAndNamesIt) {
  faults("* down\n");
  startOrFail();
  auto p = h_.ctl({"prolog"}, ipuEnv(8102, "2", "1"));
  EXPECT_EQ(p.exit_code, 1) << "a controller outage is a node fault";
  EXPECT_NE(p.err.find("vipu controller 127.0.0.1:8090"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("connection refused"), std::string::npos) << p.err;
  std::string log = h_.daemonLog();
  auto line = log.find("prolog: job 8102: ");
  ASSERT_NE(line, std::string::npos) << "the daemon logs the failure: " << log;
  std::string text = log.substr(line, log.find('\n', line) - line);
  EXPECT_NE(text.find("vipu controller 127.0.0.1:8090"), std::string::npos) << text;
  EXPECT_NE(text.find("connection refused"), std::string::npos) << text;
  EXPECT_FALSE(exists(ipuof_ + "/8102"));
  auto st = h_.ctl({"status", "--json"});
  EXPECT_NE(st.out.find("8102"), std::string::npos) << "the failure is among the last errors";
  faults("");
  p = h_.ctl({"prolog"}, ipuEnv(8102, "2", "1"));
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(partitions().count("p8102"), 1u);
}

// accel_driver_call_seconds: the V-IPU controller's calls, by outcome.
TEST_F(IpuProcessTest, VendorCallsAreTimedByOutcome) {
  const uint16_t port = support::freePort();
  h_.writeConfig(
      "HwMockDir=" ACCEL_HW_MOCK_BUILD "\nMetricsAddress=127.0.0.1:" + std::to_string(port) + "\n");
  faults("* down\n");
  startOrFail();
  EXPECT_EQ(h_.ctl({"prolog"}, ipuEnv(8103, "2", "1")).exit_code, 1);
  faults("");
  ASSERT_EQ(h_.ctl({"prolog"}, ipuEnv(8104, "2", "1")).exit_code, 0);
  std::string text = support::httpExchange(port, "GET /metrics HTTP/1.0\r\n\r\n");
  auto count = [&](const std::string& result) {
    std::string line =
        "\naccel_driver_call_seconds_count{driver=\"vipu\",result=\"" + result + "\"} ";
    size_t at = text.find(line);
    return at == std::string::npos ? -1L : std::stol(text.substr(at + line.size()));
  };
  EXPECT_GE(count("error"), 1) << text;
  EXPECT_GE(count("ok"), 1) << text;
  ASSERT_EQ(h_.ctl({"epilog"}, ipuEnv(8104, "2", "1")).exit_code, 0);
}

TEST_F(IpuProcessTest, FailureHalfWayRemovesThePartitionItMade) {
  faults("get fail\n");
  startOrFail();
  auto p = h_.ctl({"prolog"}, ipuEnv(8103, "2", "1"));
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_EQ(partitions().count("p8103"), 0u) << "created, then rolled back";
  EXPECT_FALSE(exists(ipuof_ + "/8103"));
}

TEST_F(IpuProcessTest, TransientOutageIsRetried) {
  faults("create down once\n");
  startOrFail();
  auto p = h_.ctl({"prolog"}, ipuEnv(8104, "2", "1"));
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(partitions().count("p8104"), 1u);
}

TEST_F(IpuProcessTest, HangingControllerIsBoundedAndRolledBack) {
  faults("create hang\n");
  startOrFail();
  auto start = std::chrono::steady_clock::now();
  auto p = h_.ctl({"prolog"}, ipuEnv(8105, "2", "1"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("timed out"), std::string::npos) << p.err;
  EXPECT_FALSE(exists(ipuof_ + "/8105"));
}

TEST_F(IpuProcessTest, EpilogAfterADaemonCrashRemovesThePartition) {
  startOrFail();
  ASSERT_EQ(h_.ctl({"prolog"}, ipuEnv(8106, "2", "1")).exit_code, 0);
  h_.kill9();
  startOrFail();
  ASSERT_EQ(h_.ctl({"epilog"}, ipuEnv(8106, "2", "1")).exit_code, 0);
  EXPECT_EQ(partitions().count("p8106"), 0u);
  EXPECT_FALSE(exists(ipuof_ + "/8106"));
}

TEST_F(IpuProcessTest, EpilogWhileTheControllerIsDownFailsThenSucceedsOnceItIsBack) {
  startOrFail();
  ASSERT_EQ(h_.ctl({"prolog"}, ipuEnv(8107, "2", "1")).exit_code, 0);
  faults("remove down\n");
  auto e = h_.ctl({"epilog"}, ipuEnv(8107, "2", "1"));
  EXPECT_EQ(e.exit_code, 1) << "the partition could not be removed: a node fault";
  EXPECT_NE(e.err.find("p8107"), std::string::npos) << e.err;
  faults("");
  EXPECT_EQ(h_.ctl({"epilog"}, ipuEnv(8107, "2", "1")).exit_code, 0);
  EXPECT_EQ(partitions().count("p8107"), 0u);
}

TEST_F(IpuProcessTest, FourJobsAtOnceGetFourPartitions) {
  startOrFail();
  std::vector<std::thread> threads;
  std::vector<int> codes(4, -1);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back(
        [&, i] { codes[i] = h_.ctl({"prolog"}, ipuEnv(8110 + i, "4", "1")).exit_code; });
  for (auto& t : threads) t.join();
  for (int c : codes) EXPECT_EQ(c, 0);
  auto parts = partitions();
  std::set<int> ipus;
  for (int i = 0; i < 4; ++i) {
    auto& p = parts["p" + std::to_string(8110 + i)];
    ASSERT_TRUE(p.is_object());
    for (auto& id : p["ipus"]) ipus.insert(id.get<int>());
  }
  EXPECT_EQ(ipus.size(), 16u) << "no IPU is in two partitions";
}

TEST_F(IpuProcessTest, JobWithoutIpusNeverCallsTheController) {
  startOrFail();
  ASSERT_EQ(h_.ctl({"prolog"}, AgentHarness::jobEnv(8120, 4242)).exit_code, 0);
  ASSERT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(8120, 4242)).exit_code, 0);
  EXPECT_FALSE(exists(state_ + "/vipu/calls.log"));
}

TEST_F(IpuProcessTest, SecureConfigWithAReadableKeyIsRefusedAtStart) {
  write(h_.dir() + "/key.pem", "key");
  write(h_.dir() + "/cert.pem", "cert");
  ::chmod((h_.dir() + "/key.pem").c_str(), 0644);
  write(h_.dir() + "/vipu.conf",
        "ApiHost=127.0.0.1\nIpuofDir=" + ipuof_ +
            "\nIsSecure=yes\nApiUser=slurm\nApiAccessKey=k\nClientCertFile=" + h_.dir() +
            "/cert.pem\nClientKeyFile=" + h_.dir() + "/key.pem\nServerCertFile=" + h_.dir() +
            "/cert.pem\n");
  EXPECT_FALSE(h_.start(5s));
  EXPECT_NE(h_.startError().find("ClientKeyFile"), std::string::npos) << h_.startError();
  EXPECT_NE(h_.startError().find("0644"), std::string::npos) << h_.startError();
}

TEST_F(IpuProcessTest, SecureModePassesTheCredentials) {
  write(h_.dir() + "/key.pem", "key");
  write(h_.dir() + "/cert.pem", "cert");
  ::chmod((h_.dir() + "/key.pem").c_str(), 0600);
  write(h_.dir() + "/vipu.conf",
        "ApiHost=127.0.0.1\nIpuofDir=" + ipuof_ +
            "\nIsSecure=yes\nApiUser=slurm\nApiAccessKey=s3cret\nClientCertFile=" + h_.dir() +
            "/cert.pem\nClientKeyFile=" + h_.dir() + "/key.pem\nServerCertFile=" + h_.dir() +
            "/cert.pem\n");
  std::filesystem::create_directories(state_ + "/vipu");
  write(state_ + "/vipu/secure", "user=slurm\naccess-key=s3cret\n");
  startOrFail();
  auto p = h_.ctl({"prolog"}, ipuEnv(8121, "2", "1"));
  EXPECT_EQ(p.exit_code, 0) << p.err;
  const std::string d = h_.dir();
  EXPECT_EQ(partitions("--api-user slurm --api-access-key s3cret --api-client-cert " + d +
                       "/cert.pem --api-client-key " + d + "/key.pem --api-server-cert " + d +
                       "/cert.pem")
                .count("p8121"),
            1u);
  EXPECT_TRUE(partitions().empty()) << "without credentials the controller answers nothing";
}

// A node without vipu.conf (and without IPUs of its own) that is sent an IPU
// job: the prolog exits 0 at once (the job fails, Slurm drains nothing for
// "Prolog error"), says the agent drains the node, and keeps the job's reason
// for its tasks; the controller is never called. The drain itself is asked
// of slurmctld off the hook's path, in a child bounded to 10 s: with no
// Slurm configuration here libslurm waits for one (up to a minute), the
// child is killed, and `accelctl status` tells both the fault and the drain
// that timed out.
TEST_F(IpuProcessTest, IpuJobOnANodeWithoutVipuFailsTheJobAndDrainsTheNode) {
  std::filesystem::remove(h_.dir() + "/vipu.conf");
  const std::string no_slurm = h_.dir() + "/no-slurm.conf";
  ::setenv("SLURM_CONF", no_slurm.c_str(), 1);  // inherited by the daemon and its children
  bool started = h_.start();
  ::unsetenv("SLURM_CONF");
  ASSERT_TRUE(started) << h_.startError();
  auto t0 = std::chrono::steady_clock::now();
  auto p = h_.ctl({"prolog"}, ipuEnv(8150, "2", "1"));
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_LT(took, 2s) << "the hook waited for the drain";
  EXPECT_NE(p.err.find("has no V-IPU controller (no vipu.conf beside " + h_.configPath() + ")"),
            std::string::npos)
      << p.err;
  EXPECT_NE(p.err.find("(the job fails; accel-agentd drains this node: a configuration fault)"),
            std::string::npos)
      << p.err;
  auto job = h_.ctl({"job", "8150", "--json"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  auto j = json::parse(job.out);
  EXPECT_EQ(j["state"], "Failed") << job.out;
  EXPECT_NE(j["last_error"].get<std::string>().find(
                "yet the job asked for 2 IPUs: a fault of the cluster's configuration"),
            std::string::npos)
      << job.out;
  EXPECT_EQ(calls("partition"), 0);
  std::string status;
  for (int i = 0; i < 150; ++i) {
    status = h_.ctl({"status"}).out;
    if (status.find("not drained in Slurm") != std::string::npos) break;
    std::this_thread::sleep_for(100ms);
  }
  auto drain_took = std::chrono::steady_clock::now() - t0;
  EXPECT_NE(
      status.find(
          "configuration fault: job 8150 asked for IPUs but this node has no V-IPU controller"),
      std::string::npos)
      << status;
  EXPECT_NE(status.find("drain: job 8150: node "), std::string::npos) << status;
  EXPECT_NE(status.find("not drained in Slurm"), std::string::npos) << status;
  EXPECT_NE(status.find("timed out"), std::string::npos) << status;
  EXPECT_GE(drain_took, 9s);
  EXPECT_LT(drain_took, 14s) << "the drain is bounded by 10 s";
  EXPECT_NE(status.find("NEEDS ATTENTION"), std::string::npos) << status;
  ASSERT_EQ(h_.ctl({"epilog"}, ipuEnv(8150, "2", "1")).exit_code, 0);
  EXPECT_EQ(calls("partition"), 0);
}

}  // namespace
}  // namespace accel::testing
