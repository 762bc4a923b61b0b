#include "accel/agentd/control_handler.h"

#include <gtest/gtest.h>

#include "test_inventory.h"

#include <random>

#include "accel/agent/job_dir_step.h"
#include "accel/common/safe_file.h"
#include "accel/schemas/control_generated.h"

namespace accel::agentd {
namespace {

namespace fb = accel::control;

class ControlHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/accel-handler-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ASSERT_TRUE(makeDirectory(root_ + "/jobs", 0755).ok());
    agent::Inventory inv = accel::agentd::testing::twoGpuInventory();
    std::vector<std::unique_ptr<agent::JobStep>> steps;
    steps.push_back(std::make_unique<agent::JobDirStep>(root_ + "/jobs"));
    manager_ = std::make_unique<agent::JobManager>(agent::JobStore(root_ + "/state"), inv, std::move(steps),
                                                   [] { return int64_t{5}; });
    ASSERT_TRUE(manager_->recover().ok());
    ctx_.manager = manager_.get();
    ctx_.slurm_uid = 64030;
    ctx_.node_name = "n1";
    ctx_.version = "test";
  }
  void TearDown() override { ASSERT_TRUE(removeTree(root_).ok()); }

  static std::vector<uint8_t> prolog(uint32_t job, uint32_t uid, const char* gpus) {
    flatbuffers::FlatBufferBuilder fbb;
    auto spec = fb::CreateJobSpecDirect(fbb, job, uid, uid, "alice", "n1", "debug", gpus);
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest, fb::CreatePrologRequest(fbb, spec).Union()),
               fb::RequestIdentifier());
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
  }
  static std::vector<uint8_t> simple(fb::RequestBody kind, uint32_t job = 0) {
    flatbuffers::FlatBufferBuilder fbb;
    flatbuffers::Offset<void> b;
    switch (kind) {
      case fb::RequestBody::EpilogRequest: b = fb::CreateEpilogRequest(fbb, job, 0).Union(); break;
      case fb::RequestBody::JobsRequest: b = fb::CreateJobsRequest(fbb).Union(); break;
      case fb::RequestBody::JobRequest: b = fb::CreateJobRequest(fbb, job).Union(); break;
      default: b = fb::CreateStatusRequest(fbb).Union(); break;
    }
    fbb.Finish(fb::CreateRequest(fbb, 1, kind, b), fb::RequestIdentifier());
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
  }
  const fb::Reply* call(uid_t uid, const std::vector<uint8_t>& req) {
    last_ = handleRequest(ctx_, Caller{uid, 1}, req);
    flatbuffers::Verifier v(last_.data(), last_.size());
    EXPECT_TRUE(v.VerifyBuffer<fb::Reply>(nullptr));
    return flatbuffers::GetRoot<fb::Reply>(last_.data());
  }

  std::string root_;
  std::unique_ptr<agent::JobManager> manager_;
  HandlerContext ctx_;
  std::vector<uint8_t> last_;
};

TEST_F(ControlHandlerTest, RootRunsPrologAndEpilog) {
  auto* r = call(0, prolog(42, 1000, "1"));
  ASSERT_EQ(r->outcome(), fb::Outcome::Ok) << r->message()->str();
  auto* job = r->body_as_JobInfo();
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->state(), fb::JobState::Ready);
  EXPECT_EQ(job->devices()->Get(0)->index(), 1u);
  EXPECT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, 42))->outcome(), fb::Outcome::Ok);
  EXPECT_FALSE(manager_->job(42).has_value());
}

TEST_F(ControlHandlerTest, SlurmUserMayRunHooksOrdinaryUserMayNot) {
  EXPECT_EQ(call(64030, prolog(43, 1000, ""))->outcome(), fb::Outcome::Ok);
  auto* r = call(1000, prolog(44, 1000, ""));
  EXPECT_EQ(r->outcome(), fb::Outcome::PermissionDenied);
  EXPECT_FALSE(manager_->job(44).has_value());
  EXPECT_EQ(call(1000, simple(fb::RequestBody::EpilogRequest, 43))->outcome(), fb::Outcome::PermissionDenied);
  EXPECT_TRUE(manager_->job(43).has_value());
}

TEST_F(ControlHandlerTest, UsersSeeOnlyTheirOwnJobs) {
  ASSERT_EQ(call(0, prolog(50, 1000, ""))->outcome(), fb::Outcome::Ok);
  ASSERT_EQ(call(0, prolog(51, 2000, ""))->outcome(), fb::Outcome::Ok);
  auto* mine = call(1000, simple(fb::RequestBody::JobsRequest))->body_as_JobList();
  ASSERT_EQ(mine->jobs()->size(), 1u);
  EXPECT_EQ(mine->jobs()->Get(0)->job_id(), 50u);
  EXPECT_EQ(call(0, simple(fb::RequestBody::JobsRequest))->body_as_JobList()->jobs()->size(), 2u);
  EXPECT_EQ(call(1000, simple(fb::RequestBody::JobRequest, 51))->outcome(), fb::Outcome::NotFound);
  EXPECT_EQ(call(2000, simple(fb::RequestBody::JobRequest, 51))->outcome(), fb::Outcome::Ok);
  EXPECT_EQ(call(1000, simple(fb::RequestBody::StatusRequest))->body_as_StatusInfo()->jobs(), 2u);
}

TEST_F(ControlHandlerTest, NodeFaultAndUserErrorAreTold) {
  EXPECT_EQ(call(0, prolog(60, 1000, "0"))->outcome(), fb::Outcome::Ok);
  EXPECT_EQ(call(0, prolog(61, 1000, "0"))->outcome(), fb::Outcome::NodeFault);  // GPU held
  EXPECT_EQ(call(0, prolog(62, 1000, "0,"))->outcome(), fb::Outcome::UserError);
  // The failed job stays visible with its reason, for the job's tasks to report.
  auto* failed = call(0, simple(fb::RequestBody::JobRequest, 62))->body_as_JobInfo();
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->state(), fb::JobState::Failed);
  EXPECT_NE(failed->last_error()->str().find("bad GPU list"), std::string::npos);
}

TEST_F(ControlHandlerTest, GarbageTruncatedAndEmptyRequestsAreBadRequests) {
  auto good = prolog(70, 1000, "");
  EXPECT_EQ(call(0, {})->outcome(), fb::Outcome::BadRequest);
  EXPECT_EQ(call(0, std::vector<uint8_t>(good.begin(), good.begin() + good.size() / 2))->outcome(),
            fb::Outcome::BadRequest);
  std::mt19937 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::vector<uint8_t> g(1 + rng() % 200);
    for (auto& c : g) c = static_cast<uint8_t>(rng());
    EXPECT_EQ(call(0, g)->outcome(), fb::Outcome::BadRequest);
  }
  EXPECT_EQ(manager_->stats().jobs, 0u);
}

// Found by fuzz_control_request: an EpilogRequest type with no table passes
// verification, and reading it dereferenced null.
TEST_F(ControlHandlerTest, UnionTypeWithoutTableIsABadRequest) {
  const std::vector<uint8_t> crash = {
      0x14, 0x0, 0x0, 0x0, 0x41, 0x43, 0x52, 0x51, 0x0, 0x0, 0x8, 0x0, 0xc, 0x0, 0x0, 0x0, 0x7, 0x0, 0x8, 0x0,
      0xa,  0x0, 0x0, 0x0, 0x0,  0x0,  0x0,  0x2,  0xc, 0x0, 0x0, 0x0, 0x88, 0x0, 0xc, 0x0, 0x4, 0x0, 0x8, 0x0,
      0x8,  0x0, 0x0, 0x0, 0x2a, 0x5b, 0x0,  0x0,  0xe8, 0x3, 0x0, 0x0};
  EXPECT_EQ(call(0, crash)->outcome(), fb::Outcome::BadRequest);
  for (auto kind : {fb::RequestBody::PrologRequest, fb::RequestBody::EpilogRequest, fb::RequestBody::JobRequest,
                    fb::RequestBody::TaskRequest, fb::RequestBody::StepRequest, fb::RequestBody::StatusRequest}) {
    flatbuffers::FlatBufferBuilder fbb;
    fb::RequestBuilder b(fbb);
    b.add_body_type(kind);
    fbb.Finish(b.Finish(), fb::RequestIdentifier());
    std::vector<uint8_t> v(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
    EXPECT_EQ(call(0, v)->outcome(), fb::Outcome::BadRequest) << fb::EnumNameRequestBody(kind);
  }
}

// Found by fuzz_control_request: a user name that is not UTF-8 made the
// record's JSON encoding throw inside a worker, which ended the daemon.
TEST_F(ControlHandlerTest, UncleanTextInARequestIsRefused) {
  for (const char* user : {"\x9c", "a\nb", "ok"}) {
    for (const char* gpus : {"", "0;rm"}) {
      flatbuffers::FlatBufferBuilder fbb;
      auto spec = fb::CreateJobSpecDirect(fbb, 80, 1000, 1000, user, "n1", "debug", gpus);
      fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest, fb::CreatePrologRequest(fbb, spec).Union()),
                 fb::RequestIdentifier());
      std::vector<uint8_t> v(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
      bool clean = std::string(user) == "ok" && std::string(gpus).empty();
      EXPECT_EQ(call(0, v)->outcome(), clean ? fb::Outcome::Ok : fb::Outcome::BadRequest) << user << " " << gpus;
    }
  }
  EXPECT_EQ(manager_->stats().jobs, 1u);
}

TEST_F(ControlHandlerTest, UnknownVersionAndMissingJobIdAreRefused) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::CreateRequest(fbb, 99, fb::RequestBody::StatusRequest, fb::CreateStatusRequest(fbb).Union()),
             fb::RequestIdentifier());
  std::vector<uint8_t> v(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  EXPECT_EQ(call(0, v)->outcome(), fb::Outcome::BadRequest);
  EXPECT_EQ(call(0, prolog(0, 1000, ""))->outcome(), fb::Outcome::BadRequest);
}

// Every node of a job tells the event stream the job's nodes, and names the
// job's partition and its IPUs alike (the aggregator counts them once). Only
// the leader, which makes the partition, asks slurmctld for its task count.
class NamesThePartition : public agent::JobStep {
 public:
  std::string_view name() const override { return "partition"; }
  Status setUp(agent::JobRecord& job) override {
    job.ipu_partition = "p" + std::to_string(job.spec.job_id);
    return okStatus();
  }
  Status tearDown(const agent::JobRecord&) override { return okStatus(); }
};

TEST_F(ControlHandlerTest, EveryNodeOfAJobTellsItsNodesAndNamesItsPartitionAlike) {
  std::vector<std::unique_ptr<agent::JobStep>> steps;
  steps.push_back(std::make_unique<NamesThePartition>());
  agent::JobManager m(agent::JobStore(root_ + "/state2"), accel::agentd::testing::twoGpuInventory(), std::move(steps),
                      [] { return int64_t{5}; });
  ASSERT_TRUE(m.recover().ok());
  std::vector<event::Event> events;
  ctx_.manager = &m;
  ctx_.emit = [&events](const event::Event& e) { events.push_back(e); };
  std::vector<uint32_t> asked;
  ctx_.tasks_on_node = [&asked](uint32_t job) -> Result<uint32_t> {
    asked.push_back(job);
    return 2u;
  };
  for (const char* node : {"sbn1", "sbn2"}) {
    SCOPED_TRACE(node);
    events.clear();
    flatbuffers::FlatBufferBuilder fbb;
    auto spec = fb::CreateJobSpecDirect(fbb, 90, 1000, 1000, "alice", node, "debug", "", 2, 0, 0, -1, 0, 0,
                                        "sbn[1-2]", 2);
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest, fb::CreatePrologRequest(fbb, spec).Union()),
               fb::RequestIdentifier());
    ASSERT_EQ(call(0, {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()})->outcome(), fb::Outcome::Ok);
    ASSERT_EQ(events.size(), 2u);
    auto* started = std::get_if<event::PrologStarted>(&events[0]);
    ASSERT_NE(started, nullptr);
    EXPECT_EQ(started->node_list, "sbn[1-2]");
    EXPECT_EQ(started->node_count, 2u);
    auto* finished = std::get_if<event::PrologFinished>(&events[1]);
    ASSERT_NE(finished, nullptr);
    EXPECT_EQ(finished->partition, "p90");
    EXPECT_EQ(finished->accel_kind, "ipu");
    EXPECT_EQ(finished->devices, (std::vector<std::string>{"p90:0", "p90:1"}));
    ASSERT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, 90))->outcome(), fb::Outcome::Ok);
  }
  EXPECT_EQ(asked, std::vector<uint32_t>{90});
  ctx_.manager = manager_.get();
}

}  // namespace
}  // namespace accel::agentd
