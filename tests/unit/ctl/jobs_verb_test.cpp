// `accelctl jobs` and `accelctl job ID` as a person reads them: the verbs run
// against the daemon's handler over a real control socket (this process
// answers as the daemon), for a job holding GPUs of the node, one holding the
// IPUs of a V-IPU partition, and one holding nothing. --json stays as it was.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "../agentd/test_inventory.h"
#include "accel/agent/ipu_partition_step.h"
#include "accel/agent/job_dir_step.h"
#include "accel/agentd/control_handler.h"
#include "accel/common/safe_file.h"
#include "accel/ctl/cli.h"
#include "accel/ipc/control_socket.h"
#include "accel/schemas/control_generated.h"
#include "answer_one_request.h"
#include "fake_clock.h"
#include "temp_dir.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;
using nlohmann::json;

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kNow = 1'800'000'000 * kSec;  // 2027-01-15T08:00:00 UTC

// A V-IPU controller that makes every partition asked for, one GCD each.
class FakeController : public ipu::PartitionController {
 public:
  Status create(const ipu::PartitionSpec&) override { return okStatus(); }
  Status remove(const std::string&) override { return okStatus(); }
  Result<std::vector<ipu::GcdConfig>> ipuofConfigs(const std::string& name) override {
    return std::vector<ipu::GcdConfig>{{0, "{\"partition_id\": \"" + name + "\"}\n"}};
  }
  std::string describe() const override { return "fake vipu"; }
};

// The line of `accelctl jobs` for `job`; empty if there is none.
std::string lineOf(const std::string& table, uint32_t job) {
  const std::string start = std::to_string(job) + " ";
  for (size_t at = 0; at < table.size();) {
    size_t end = table.find('\n', at);
    std::string line = table.substr(at, end - at);
    if (line.rfind(start, 0) == 0) return line;
    at = end == std::string::npos ? table.size() : end + 1;
  }
  return "";
}

struct Output {
  int code = -1;
  std::string out, err;
};

class JobsVerbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    ASSERT_TRUE(makeDirectory(root_ + "/jobs", 0755).ok());
    ASSERT_TRUE(makeDirectory(root_ + "/ipuof", 0755).ok());
    ASSERT_TRUE(
        writeFileAtomic(root_ + "/accel.conf", "ControlSocket=" + root_ + "/control.sock\n", 0644)
            .ok());
    VipuConfig vipu;
    vipu.api_host = "10.1.2.3";
    vipu.api_port = 8090;
    std::vector<std::unique_ptr<agent::JobStep>> steps;
    steps.push_back(std::make_unique<agent::JobDirStep>(root_ + "/jobs", root_ + "/ipuof"));
    steps.push_back(
        std::make_unique<agent::IpuPartitionStep>(std::make_shared<FakeController>(), vipu));
    manager_ = std::make_unique<agent::JobManager>(agent::JobStore(root_ + "/state"),
                                                   agentd::testing::twoGpuInventory(),
                                                   std::move(steps), clock_);
    ASSERT_TRUE(manager_->recover().ok());
    ctx_.manager = manager_.get();
    ctx_.node_name = "node1";
  }
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }

  // The prolog of a job of this test's user, as slurmd's hook sends it.
  fb::Outcome prolog(uint32_t job, const char* gpus, uint32_t ipus) {
    flatbuffers::FlatBufferBuilder fbb;
    auto spec = fb::CreateJobSpecDirect(fbb, job, ::getuid(), ::getgid(), "alice", "node1", "debug",
                                        gpus, ipus, 0, 1);
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest,
                                 fb::CreatePrologRequest(fbb, spec).Union()),
               fb::RequestIdentifier());
    std::vector<uint8_t> req(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
    auto reply = agentd::handleRequest(ctx_, agentd::Caller{0, 1}, req);
    return flatbuffers::GetRoot<fb::Reply>(reply.data())->outcome();
  }

  // Runs `accelctl ARGS` while this process answers one request as the daemon.
  Output accelctl(std::vector<std::string> args) {
    Output r;
    auto listener = ipc::listenControl(root_ + "/control.sock", 0600);
    EXPECT_TRUE(listener.ok());
    if (!listener.ok()) return r;
    std::thread daemon = test::answerOneRequest(*listener, ctx_);
    args.insert(args.begin(), {"--config", root_ + "/accel.conf"});
    CliIo io{[](const char*) -> const char* { return nullptr; },
             [&r](const std::string& s) { r.out += s; },
             [&r](const std::string& s) { r.err += s + "\n"; }};
    r.code = runCli(args, io);
    daemon.join();
    return r;
  }

  support::TempDir tmp_{"accel-jobs-verb"};
  std::string root_ = tmp_.path();
  support::FakeClock clock_{kNow};  // the job manager's, which never moves
  std::unique_ptr<agent::JobManager> manager_;
  agentd::HandlerContext ctx_;
};

// An IPU job on an IPU-POD host holds no device of the node: its IPUs are
// its partition's, named as the job's events name them, not "-".
TEST_F(JobsVerbTest, AnIpuJobShowsItsPartitionAsItsDevices) {
  ASSERT_EQ(prolog(47, "", 2), fb::Outcome::Ok);
  auto r = accelctl({"jobs"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "JOBID      USER         STATE    READY                DEVICES");
  EXPECT_EQ(lineOf(r.out, 47), "47         alice        Ready    2027-01-15T08:00:00  p47:0,p47:1");

  r = accelctl({"job", "47"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_NE(r.out.find("\ndevices     p47:0,p47:1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nenv         IPUOF_VIPU_API_PARTITION_ID=p47\n"), std::string::npos)
      << r.out;
}

TEST_F(JobsVerbTest, AGpuJobShowsItsDevicesByName) {
  ASSERT_EQ(prolog(42, "1", 0), fb::Outcome::Ok);
  auto r = accelctl({"jobs"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(lineOf(r.out, 42), "42         alice        Ready    2027-01-15T08:00:00  cuda1");
  r = accelctl({"job", "42"});
  EXPECT_EQ(r.out.rfind("job         42 (alice)\n"
                        "state       Ready\n"
                        "ready       2027-01-15T08:00:00\n"
                        "devices     cuda1\n"
                        "directory   " +
                            root_ + "/jobs/42\n",
                        0),
            0u)
      << r.out;
}

// A job that failed in its prolog holds nothing and never became ready:
// the table says so in words, not with "-".
TEST_F(JobsVerbTest, AFailedJobWasNeverReadyAndHoldsNothing) {
  ASSERT_EQ(prolog(70, "3-1", 0), fb::Outcome::UserError);  // a malformed GPU range
  auto r = accelctl({"jobs"});
  ASSERT_EQ(r.code, kOk) << r.err;
  EXPECT_EQ(lineOf(r.out, 70), "70         alice        Failed   never                none");
  r = accelctl({"job", "70"});
  EXPECT_NE(r.out.find("\nready       never\ndevices     none\ndirectory   none\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nerror       "), std::string::npos) << r.out;
}

// --json is for scripts and stays as it was: the same keys, devices as the
// node's device indices (none for an IPU partition), times as before.
TEST_F(JobsVerbTest, JsonIsUnchanged) {
  ASSERT_EQ(prolog(47, "", 2), fb::Outcome::Ok);
  ASSERT_EQ(prolog(42, "1", 0), fb::Outcome::Ok);
  auto r = accelctl({"jobs", "--json"});
  ASSERT_EQ(r.code, kOk) << r.err;
  auto list = json::parse(r.out);
  ASSERT_EQ(list.size(), 2u);
  for (const auto& j : list) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items()) keys.push_back(k);
    EXPECT_EQ(keys, (std::vector<std::string>{"appliance_jobs", "appliance_seconds", "devices",
                                              "env", "job_dir", "job_id", "last_error",
                                              "prolog_started", "ready", "state", "uid", "user"}));
    EXPECT_EQ(j["state"], "Ready");
    EXPECT_EQ(j["ready"], "2027-01-15T08:00:00");
  }
  const auto& gpu = list[0]["job_id"] == 42 ? list[0] : list[1];
  const auto& ipu = list[0]["job_id"] == 47 ? list[0] : list[1];
  EXPECT_EQ(gpu["devices"], json::array({1}));
  EXPECT_EQ(ipu["devices"], json::array());
  EXPECT_EQ(ipu["env"]["IPUOF_VIPU_API_PARTITION_ID"], "p47");
  r = accelctl({"job", "42", "--json"});
  EXPECT_EQ(json::parse(r.out), gpu);
  EXPECT_EQ(r.out.substr(0, 4), "{\n  ");  // two-space indent, as before
}

}  // namespace
}  // namespace accel::ctl
