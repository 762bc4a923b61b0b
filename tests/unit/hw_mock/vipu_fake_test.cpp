// The fake `vipu`: partitions, the IPU pool, IPUoF configs, secure mode.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "fake_runner.h"

namespace accel::hw_mock {
namespace {

using nlohmann::json;
using test::FakeEnv;
using test::RunResult;

RunResult create(const FakeEnv& env, const std::string& name, const std::string& size,
                 std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"create", "partition", name, "--size", size};
  args.insert(args.end(), extra.begin(), extra.end());
  return env.run(FAKE_VIPU, args);
}

json listJson(const FakeEnv& env) {
  RunResult r = env.run(FAKE_VIPU, {"list", "partitions", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TEST(FakeVipu, CreateListGetRemove) {
  FakeEnv env;
  RunResult c = create(env, "p1", "4", {"--num-gcds", "2", "--num-replicas", "2"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("p1"), std::string::npos);
  EXPECT_EQ(std::count(c.out.begin(), c.out.end(), '\n'), 1);

  RunResult table = env.run(FAKE_VIPU, {"list", "partitions"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  std::istringstream lines(table.out);
  std::string header, row, extra;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_EQ(words(header), (std::vector<std::string>{"ID", "SIZE", "GCDS", "REPLICAS", "STATE"}));
  EXPECT_EQ(words(row), (std::vector<std::string>{"p1", "4", "2", "2", "ACTIVE"}));
  EXPECT_FALSE(std::getline(lines, extra));

  json list = listJson(env);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["id"], "p1");
  EXPECT_EQ(list[0]["size"], 4);
  EXPECT_EQ(list[0]["gcds"], 2);
  EXPECT_EQ(list[0]["replicas"], 2);
  EXPECT_EQ(list[0]["state"], "ACTIVE");

  RunResult rm = env.run(FAKE_VIPU, {"remove", "partition", "p1"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_TRUE(listJson(env).empty());
}

TEST(FakeVipu, IpuConfigsHaveOneEntryPerGcd) {
  FakeEnv env;
  ASSERT_EQ(create(env, "job42", "8", {"--num-gcds", "2"}).exit_code, 0);
  RunResult r = env.run(FAKE_VIPU, {"--api-host", "vipu-ctl", "--api-port=9001", "get", "partition",
                                    "job42", "--ipu-configs"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["partition"], "job42");
  ASSERT_EQ(doc["gcds"].size(), 2u);
  std::set<int> seen;
  for (int g = 0; g < 2; ++g) {
    const json& entry = doc["gcds"][static_cast<size_t>(g)];
    EXPECT_EQ(entry["gcd"], g);
    const json& cfg = entry["config"];
    EXPECT_TRUE(cfg.contains("ipuof_version"));
    EXPECT_EQ(cfg["partition_id"], "job42");
    EXPECT_EQ(cfg["gcd_index"], g);
    EXPECT_EQ(cfg["vipu_controller"]["host"], "vipu-ctl");
    EXPECT_EQ(cfg["vipu_controller"]["port"], 9001);
    ASSERT_EQ(cfg["ipus"].size(), 4u);
    for (const json& ipu : cfg["ipus"]) {
      EXPECT_TRUE(ipu["fabric_address"].get<std::string>().starts_with("10."));
      EXPECT_TRUE(seen.insert(ipu["ipu_id"].get<int>()).second) << "IPU in two GCDs";
    }
  }
}

TEST(FakeVipu, WithoutTheVariableStateLivesBesideTheBinDirectory) {
  FakeEnv env;
  std::filesystem::create_directories(env.root() + "/install/bin");
  const std::string copy = env.root() + "/install/bin/vipu";
  std::filesystem::copy_file(FAKE_VIPU, copy);
  RunResult r =
      env.run(copy, {"create", "partition", "p1", "--size", "2"}, {{"ACCEL_HW_MOCK_STATE", ""}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(env.read("install/state/vipu/partitions.json").find("p1"), std::string::npos);
  EXPECT_EQ(env.read("vipu/partitions.json"), "");
}

TEST(FakeVipu, GlobalOptionsAreAcceptedAnywhere) {
  FakeEnv env;
  RunResult r = env.run(FAKE_VIPU, {"create", "--api-timeout", "50", "partition", "p1",
                                    "--api-host", "h1", "--size", "2", "--api-port", "8090"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(listJson(env).size(), 1u);
}

TEST(FakeVipu, DuplicateNameIsRefused) {
  FakeEnv env;
  ASSERT_EQ(create(env, "p1", "2").exit_code, 0);
  RunResult r = create(env, "p1", "2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.err.starts_with("Error:")) << r.err;
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;
  EXPECT_EQ(listJson(env).size(), 1u);
}

TEST(FakeVipu, PoolSizeLimitsAllocationAndRemoveFreesIpus) {
  FakeEnv env;
  env.write("vipu/pool_size", "8\n");
  ASSERT_EQ(create(env, "a", "8").exit_code, 0);
  RunResult full = create(env, "b", "1");
  EXPECT_EQ(full.exit_code, 1);
  EXPECT_TRUE(full.err.starts_with("Error:")) << full.err;
  EXPECT_NE(full.err.find("not enough free IPUs"), std::string::npos) << full.err;
  ASSERT_EQ(env.run(FAKE_VIPU, {"remove", "partition", "a"}).exit_code, 0);
  EXPECT_EQ(create(env, "b", "4").exit_code, 0);
}

TEST(FakeVipu, DefaultPoolHolds64Ipus) {
  FakeEnv env;
  EXPECT_EQ(create(env, "big", "64").exit_code, 0);
  EXPECT_EQ(create(env, "one", "1").exit_code, 1);
}

TEST(FakeVipu, BadSizesAreRefusedWithoutChangingState) {
  FakeEnv env;
  const std::vector<std::vector<std::string>> bad = {
      {"3"},
      {"0"},
      {"-4"},
      {"x"},
      {"4", "--num-gcds", "3"},
      {"4", "--num-gcds", "0"},
      {"4", "--num-replicas", "3"},
      {"8", "--num-gcds", "2", "--num-replicas", "16"},
      {"4", "--num-replicas", "0"}};
  for (const auto& b : bad) {
    RunResult r = create(env, "p", b[0], std::vector<std::string>(b.begin() + 1, b.end()));
    EXPECT_EQ(r.exit_code, 1) << b[0];
    EXPECT_TRUE(r.err.starts_with("Error:")) << r.err;
  }
  EXPECT_TRUE(listJson(env).empty());
}

TEST(FakeVipu, UnknownPartitionIsNotFound) {
  FakeEnv env;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"remove", "partition", "ghost"},
        std::vector<std::string>{"get", "partition", "ghost", "--ipu-configs"}}) {
    RunResult r = env.run(FAKE_VIPU, args);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(r.err.starts_with("Error:")) << r.err;
    EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;
  }
}

TEST(FakeVipu, UsageErrorsExitTwo) {
  FakeEnv env;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{},
        std::vector<std::string>{"create", "partition", "p1", "--size", "2", "--bogus"},
        std::vector<std::string>{"list", "partitions", "--size", "2"},
        std::vector<std::string>{"frobnicate", "partition", "p1"},
        std::vector<std::string>{"create", "partition", "--size"},
        std::vector<std::string>{"list", "partitions", "--api-port", "http"},
        std::vector<std::string>{"list", "partitions", "--api-timeout=0"}}) {
    EXPECT_EQ(env.run(FAKE_VIPU, args).exit_code, 2);
  }
}

TEST(FakeVipu, ParallelCreatesNeverOversubscribeThePool) {
  FakeEnv env;
  env.write("vipu/pool_size", "16");
  std::vector<test::Process> procs;
  for (int i = 0; i < 8; ++i)
    procs.push_back(
        env.start(FAKE_VIPU, {"create", "partition", "p" + std::to_string(i), "--size", "4"}));
  std::set<std::string> succeeded;
  int refused = 0;
  for (int i = 0; i < 8; ++i) {
    RunResult r = test::wait(procs[static_cast<size_t>(i)]);
    if (r.exit_code == 0) {
      succeeded.insert("p" + std::to_string(i));
    } else {
      EXPECT_EQ(r.exit_code, 1);
      EXPECT_NE(r.err.find("not enough free IPUs"), std::string::npos) << r.err;
      ++refused;
    }
  }
  EXPECT_EQ(succeeded.size(), 4u);
  EXPECT_EQ(refused, 4);
  std::set<std::string> listed;
  std::set<int> ipus;
  for (const json& p : listJson(env)) {
    listed.insert(p["id"].get<std::string>());
    for (int id : p["ipus"]) {
      EXPECT_TRUE(ipus.insert(id).second) << "IPU " << id << " given twice";
      EXPECT_GE(id, 0);
      EXPECT_LT(id, 16);
    }
  }
  EXPECT_EQ(listed, succeeded);
  EXPECT_EQ(ipus.size(), 16u);
  const std::string log = env.read("vipu/calls.log");
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 9);  // 8 creates and 1 list, no torn lines
}

// The five options of a secure controller, with files that exist.
std::vector<std::string> secureOptions(const FakeEnv& env, const std::string& key) {
  env.write("tls/client.crt", "cert");
  env.write("tls/client.key", "key");
  env.write("tls/server.crt", "cert");
  return {"--api-user",        "slurm",
          "--api-access-key",  key,
          "--api-client-cert", env.root() + "/tls/client.crt",
          "--api-client-key",  env.root() + "/tls/client.key",
          "--api-server-cert", env.root() + "/tls/server.crt"};
}

TEST(FakeVipu, SecureControllerNeedsAllFiveOptions) {
  FakeEnv env;
  env.write("vipu/secure", "");
  RunResult bare = create(env, "p1", "2");
  EXPECT_EQ(bare.exit_code, 1);
  EXPECT_NE(bare.err.find("secure mode"), std::string::npos) << bare.err;
  EXPECT_NE(bare.err.find("--api-access-key"), std::string::npos) << bare.err;

  std::vector<std::string> opts = secureOptions(env, "k3y");
  std::vector<std::string> four(opts.begin() + 2, opts.end());  // no --api-user
  RunResult partial = create(env, "p1", "2", four);
  EXPECT_EQ(partial.exit_code, 1);
  EXPECT_NE(partial.err.find("--api-user"), std::string::npos) << partial.err;

  RunResult ok = create(env, "p1", "2", opts);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(FakeVipu, SecureFilesMustExistEvenWithoutSecureMode) {
  FakeEnv env;
  std::vector<std::string> opts = secureOptions(env, "k3y");
  opts[7] = env.root() + "/tls/missing.key";
  RunResult r = create(env, "p1", "2", opts);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("missing.key"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--api-client-key"), std::string::npos) << r.err;
}

TEST(FakeVipu, SecureCredentialsAreCheckedAndTheKeyNeverLogged) {
  FakeEnv env;
  env.write("vipu/secure", "user=slurm\naccess-key=s3cret\n");
  RunResult wrong = create(env, "p1", "2", secureOptions(env, "guess"));
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("authentication failed"), std::string::npos) << wrong.err;
  RunResult right = create(env, "p1", "2", secureOptions(env, "s3cret"));
  EXPECT_EQ(right.exit_code, 0) << right.err;
  (void)env.run(FAKE_VIPU, {"list", "partitions", "--api-access-key=s3cret"});
  std::string log = env.read("vipu/calls.log");
  EXPECT_EQ(log.find("s3cret"), std::string::npos) << log;
  EXPECT_EQ(log.find("guess"), std::string::npos) << log;
  EXPECT_NE(log.find("--api-access-key *** "), std::string::npos) << log;
  EXPECT_NE(log.find("--api-access-key=***"), std::string::npos) << log;
}

}  // namespace
}  // namespace accel::hw_mock
