// `accelctl status` from end to end without processes: the daemon's handler
// answers a StatusRequest from a job manager, a health record and outbox
// counters; the view turns the reply into the table and the JSON.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "../agentd/test_inventory.h"
#include "accel/agentd/control_handler.h"
#include "accel/common/safe_file.h"
#include "accel/ctl/status_view.h"
#include "accel/schemas/control_generated.h"
#include "fake_clock.h"
#include "recording_events.h"
#include "temp_dir.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;
using nlohmann::json;

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kNow = 1'800'000'000 * kSec;

class StatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    agent::Inventory inv = agentd::testing::twoGpuInventory();
    inv.source = "/etc/slurm/ipa20.xml";
    manager_ = std::make_unique<agent::JobManager>(agent::JobStore(root_ + "/state"), inv,
                                                   std::vector<std::unique_ptr<agent::JobStep>>{},
                                                   manager_clock_);
    ASSERT_TRUE(manager_->recover().ok());
    health_ = std::make_shared<agentd::NodeHealth>(health_clock_);
    health_->configLoaded();
    ctx_.manager = manager_.get();
    ctx_.node_name = "node1";
    ctx_.version = "0.1.0";
    ctx_.config_path = "/etc/slurm/accel.conf";
    ctx_.started_ns = kNow - 600 * kSec;
    ctx_.health = health_.get();
    sink_.setAggregator("tcp://agg:7450");
    sink_.statsFrom(&outbox_);
    ctx_.events = &sink_;
    outbox_.link_up = true;
  }
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }

  const fb::Reply* call(const std::vector<uint8_t>& req) {
    reply_ = agentd::handleRequest(ctx_, agentd::Caller{0, 1}, req);
    return flatbuffers::GetRoot<fb::Reply>(reply_.data());
  }
  static std::vector<uint8_t> statusRequest() {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::StatusRequest,
                                 fb::CreateStatusRequest(fbb).Union()),
               fb::RequestIdentifier());
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
  }
  static std::vector<uint8_t> prolog(uint32_t job, const char* gpus) {
    flatbuffers::FlatBufferBuilder fbb;
    auto spec = fb::CreateJobSpecDirect(fbb, job, 1000, 1000, "alice", "node1", "debug", gpus);
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest,
                                 fb::CreatePrologRequest(fbb, spec).Union()),
               fb::RequestIdentifier());
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
  }
  const fb::StatusInfo& status() {
    const auto* s = call(statusRequest())->body_as_StatusInfo();
    EXPECT_NE(s, nullptr);
    return *s;
  }

  support::TempDir tmp_{"accel-status"};
  std::string root_ = tmp_.path();
  support::FakeClock manager_clock_{kNow};              // never moves
  support::FakeClock health_clock_{kNow - 600 * kSec};  // the node health's
  std::unique_ptr<agent::JobManager> manager_;
  std::shared_ptr<agentd::NodeHealth> health_;
  event::OutboxStats outbox_;
  support::RecordingEvents sink_;
  agentd::HandlerContext ctx_;
  std::vector<uint8_t> reply_;
};

TEST_F(StatusTest, AHealthyNodeSaysSoAndShowsEverySubject) {
  ASSERT_EQ(call(prolog(42, "1"))->outcome(), fb::Outcome::Ok);
  health_->addController("vipu", "vipu at 10.1.2.3:8090");
  health_clock_.advanceTo(kNow - 30 * kSec);
  health_->controllerCalled("vipu", "create p42", okStatus());
  outbox_.backlog = 2;
  outbox_.sent = 10;
  outbox_.acked = 8;
  const auto& s = status();
  EXPECT_TRUE(statusProblems(s, kNow).empty());
  const std::string t = statusTable(s, kNow);
  EXPECT_EQ(t.rfind("health      ok\n", 0), 0u) << t;
  EXPECT_NE(t.find("daemon      running: accel-agentd 0.1.0 on node1, since 2027-01-15T07:50:00 "
                   "(10 min ago)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("config      /etc/slurm/accel.conf, read 2027-01-15T07:50:00 (10 min ago)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("topology    /etc/slurm/ipa20.xml"), std::string::npos) << t;
  EXPECT_NE(t.find("vipu        vipu at 10.1.2.3:8090: last call 'create p42' ok at "
                   "2027-01-15T07:59:30 (30 s ago); "
                   "1 calls, 0 failed"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("events      tcp://agg:7450, link up; backlog 2 events (0 KiB) not yet "
                   "acknowledged; sent 10, "
                   "acked 8, none dropped"),
            std::string::npos)
      << t;
  // No task has run here yet: how a limit reaches a job's processes is not known.
  EXPECT_NE(t.find("limits      reach not known yet"), std::string::npos) << t;
  EXPECT_NE(t.find("jobs        1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("devices     1 of 2 in use\n  cuda0     gpu   free\n  cuda1     gpu   job 42\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("errors      none since the daemon started"), std::string::npos) << t;
}

TEST_F(StatusTest, ProblemsAreNamedAtTheTopAndInTheJson) {
  ASSERT_EQ(call(prolog(60, "0"))->outcome(), fb::Outcome::Ok);
  health_clock_.advanceTo(kNow - 120 * kSec);
  ASSERT_EQ(call(prolog(61, "0"))->outcome(), fb::Outcome::NodeFault);  // GPU 0 is held by job 60
  health_->addController("appliance", "csctl");
  health_->controllerCalled("appliance", "get jobs",
                            Error(ErrorCode::kTimeout, "csctl timed out after 5 s"));
  health_->configRefused("config not changed: accel.conf:3: key 'Foo': unknown key");
  outbox_.link_up = false;
  outbox_.backlog = 7;
  outbox_.dropped_lifecycle = 1;
  const auto& s = status();
  auto problems = statusProblems(s, kNow);
  ASSERT_EQ(problems.size(), 5u);
  EXPECT_EQ(
      problems[0],
      "the last reload was refused, the old settings stay: config not changed: accel.conf:3: key "
      "'Foo': unknown key");
  EXPECT_EQ(problems[1], "appliance: the last call failed: csctl timed out after 5 s");
  EXPECT_EQ(problems[2], "aggregator tcp://agg:7450 not reached; 7 events wait in the spool");
  EXPECT_EQ(problems[3], "1 events dropped (EventSpoolMaxSize reached)");
  EXPECT_EQ(problems[4], "2 node faults in the last hour");  // the prolog and the reload
  const std::string t = statusTable(s, kNow);
  EXPECT_EQ(t.rfind("health      NEEDS ATTENTION\n  - the last reload was refused", 0), 0u) << t;
  EXPECT_NE(t.find("            reload refused: config not changed"), std::string::npos) << t;
  EXPECT_NE(t.find("link DOWN"), std::string::npos) << t;
  EXPECT_NE(t.find("DROPPED 1 lifecycle/0 telemetry"), std::string::npos) << t;
  EXPECT_NE(t.find("errors      2027-01-15T07:58:00  prolog: job 61: "), std::string::npos) << t;

  auto j = json::parse(statusJson(s, kNow));
  EXPECT_EQ(j["healthy"], false);
  EXPECT_EQ(j["problems"].size(), 5u);
  EXPECT_EQ(j["config"], "/etc/slurm/accel.conf");
  EXPECT_EQ(j["config_error"], "config not changed: accel.conf:3: key 'Foo': unknown key");
  EXPECT_EQ(j["controllers"][0]["name"], "appliance");
  EXPECT_EQ(j["controllers"][0]["ok"], false);
  EXPECT_EQ(j["controllers"][0]["failures"], 1);
  EXPECT_EQ(j["aggregator"]["link_up"], false);
  EXPECT_EQ(j["aggregator"]["backlog"], 7);
  EXPECT_EQ(j["aggregator"]["dropped_lifecycle"], 1);
  ASSERT_EQ(j["last_errors"].size(), 2u);
  EXPECT_EQ(j["last_errors"][0]["time"], "2027-01-15T07:58:00");
  EXPECT_EQ(j["last_errors"][0]["message"].get<std::string>().rfind("prolog: job 61: ", 0), 0u);
  EXPECT_EQ(j["devices_in_use"], 1);
}

// Job events held in memory for want of spool space, and a spool that fails,
// are named: both put events at risk that nothing else on the page shows.
TEST_F(StatusTest, HeldEventsAndSpoolErrorsAreNamed) {
  outbox_.link_up = true;
  outbox_.held = 12;
  outbox_.io_errors = 3;
  const auto& s = status();
  auto problems = statusProblems(s, kNow);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(
      problems[0].rfind("12 job events wait in memory: the spool is full or cannot be written", 0),
      0u)
      << problems[0];
  EXPECT_EQ(problems[1], "3 event spool reads or syncs failed; see the agent's log");
  const std::string t = statusTable(s, kNow);
  EXPECT_NE(t.find("none dropped; 12 HELD in memory for want of spool space"), std::string::npos)
      << t;
  auto j = json::parse(statusJson(s, kNow));
  EXPECT_EQ(j["healthy"], false);
  EXPECT_EQ(j["aggregator"]["held"], 12);
  EXPECT_EQ(j["aggregator"]["spool_io_errors"], 3);
}

// A user's mistake is not the node's fault, and an old fault fades from the verdict.
TEST_F(StatusTest, OnlyRecentNodeFaultsMakeTheNodeUnwell) {
  ASSERT_EQ(call(prolog(70, "3-1"))->outcome(), fb::Outcome::UserError);  // a malformed GPU range
  EXPECT_TRUE(statusProblems(status(), kNow).empty());
  health_clock_.advanceTo(kNow - 2 * 3600 * kSec);
  health_->nodeFault("epilog: job 5: cannot remove /run/x: busy");
  const auto& s = status();
  EXPECT_TRUE(statusProblems(s, kNow).empty());
  EXPECT_NE(statusTable(s, kNow).find("errors      2027-01-15T06:00:00  epilog: job 5: "),
            std::string::npos);
}

TEST_F(StatusTest, WithoutAggregatorOrControllersTheTableSaysSo) {
  sink_.setAggregator("");
  const std::string t = statusTable(status(), kNow);
  EXPECT_NE(t.find("controllers none (no vipu.conf, no ApplianceCommand)"), std::string::npos) << t;
  EXPECT_NE(t.find("events      no aggregator (AggregatorAddress unset): events stay in the spool"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("health      ok"), std::string::npos) << t;
}

// An IPU-POD host or an appliance head node has no accelerators of its own:
// the devices line says where its jobs' are rather than "0 of 0 in use".
TEST_F(StatusTest, ANodeWithoutDevicesOfItsOwnSaysWhereTheJobsAcceleratorsAre) {
  manager_ = std::make_unique<agent::JobManager>(
      agent::JobStore(root_ + "/state-pod"), agent::Inventory{},
      std::vector<std::unique_ptr<agent::JobStep>>{}, manager_clock_);
  ASSERT_TRUE(manager_->recover().ok());
  ctx_.manager = manager_.get();
  EXPECT_NE(statusTable(status(), kNow).find("\ndevices     none attached to this node\nerrors"),
            std::string::npos)
      << statusTable(status(), kNow);
  health_->addController("vipu", "vipu at 10.1.2.3:8090");
  const std::string t = statusTable(status(), kNow);
  EXPECT_NE(t.find("\ndevices     none attached to this node: each job's IPUs are its V-IPU "
                   "partition's (accelctl jobs)\n"),
            std::string::npos)
      << t;
  health_->addController("appliance", "csctl");
  EXPECT_NE(statusTable(status(), kNow)
                .find("\ndevices     none attached to this node: jobs hold IPU partitions and CS-X "
                      "systems (accelctl jobs)\n"),
            std::string::npos);
  auto j = json::parse(statusJson(status(), kNow));  // the JSON keeps its numbers
  EXPECT_EQ(j["devices_total"], 0);
  EXPECT_EQ(j["devices_in_use"], 0);
  EXPECT_EQ(j["device_use"], json::array());
}

// Who may run a hook is part of the refusal: a person who ran it by hand learns what to do.
TEST_F(StatusTest, AHookRefusedSaysWhoMayRunIt) {
  reply_ = agentd::handleRequest(ctx_, agentd::Caller{1000, 1}, prolog(80, ""));
  const auto* r = flatbuffers::GetRoot<fb::Reply>(reply_.data());
  EXPECT_EQ(r->outcome(), fb::Outcome::PermissionDenied);
  EXPECT_EQ(r->message()->str(),
            "only root and SlurmUser may run the prolog (slurmd runs it as Prolog=); by hand, run "
            "it as root");
}

}  // namespace
}  // namespace accel::ctl
