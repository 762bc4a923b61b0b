#include "accel/agentd/control_handler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>

#include "accel/agent/job_dir_step.h"
#include "accel/agentd/node_drain.h"
#include "accel/common/safe_file.h"
#include "accel/schemas/control_generated.h"
#include "fake_clock.h"
#include "recording_events.h"
#include "temp_dir.h"
#include "test_inventory.h"

namespace accel::agentd {
namespace {

namespace fb = accel::control;

// An appliance that lists no jobs: the node reads one, nothing more.
class NoApplianceJobs : public ApplianceView {
 public:
  std::vector<appliance::ApplianceJob> jobsOf(uint32_t) const override { return {}; }
  double secondsOf(uint32_t) const override { return 0; }
  void jobsChanged() override {}
  void surrogateStarted(const std::string&) override {}
};

class ControlHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(makeDirectory(root_ + "/jobs", 0755).ok());
    agent::Inventory inv = accel::agentd::testing::twoGpuInventory();
    std::vector<std::unique_ptr<agent::JobStep>> steps;
    steps.push_back(std::make_unique<agent::JobDirStep>(root_ + "/jobs"));
    manager_ = std::make_unique<agent::JobManager>(agent::JobStore(root_ + "/state"), inv,
                                                   std::move(steps), clock_);
    ASSERT_TRUE(manager_->recover().ok());
    ctx_.manager = manager_.get();
    ctx_.slurm_uid = 64030;
    ctx_.node_name = "n1";
    ctx_.version = "test";
  }
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }

  static std::vector<uint8_t> prolog(uint32_t job, uint32_t uid, const char* gpus) {
    flatbuffers::FlatBufferBuilder fbb;
    auto spec = fb::CreateJobSpecDirect(fbb, job, uid, uid, "alice", "n1", "debug", gpus);
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest,
                                 fb::CreatePrologRequest(fbb, spec).Union()),
               fb::RequestIdentifier());
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
  }
  static std::vector<uint8_t> simple(fb::RequestBody kind, uint32_t job = 0) {
    flatbuffers::FlatBufferBuilder fbb;
    flatbuffers::Offset<void> b;
    switch (kind) {
      case fb::RequestBody::EpilogRequest:
        b = fb::CreateEpilogRequest(fbb, job, 0).Union();
        break;
      case fb::RequestBody::JobsRequest:
        b = fb::CreateJobsRequest(fbb).Union();
        break;
      case fb::RequestBody::JobRequest:
        b = fb::CreateJobRequest(fbb, job).Union();
        break;
      default:
        b = fb::CreateStatusRequest(fbb).Union();
        break;
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

  support::TempDir tmp_{"accel-handler"};
  std::string root_ = tmp_.path();
  support::FakeClock clock_{5};  // the job manager's, which never moves
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

// The request table: an events call is answered with how to read the events
// where the node has no relay, and handed over, unanswered, where it has one.
TEST_F(ControlHandlerTest, AnEventsCallGoesToTheRelayOnlyWhereThereIsOne) {
  auto events = [](uint32_t job, const std::string& node, bool follow) {
    flatbuffers::FlatBufferBuilder fbb;
    auto body = fb::CreateEventsRequestDirect(fbb, job, node.c_str(), follow, false);
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::EventsRequest, body.Union()),
               fb::RequestIdentifier());
    return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  };
  auto* r = call(1000, events(42, "", true));
  EXPECT_EQ(r->outcome(), fb::Outcome::BadRequest);
  EXPECT_NE(r->message()->str().find("AggregatorQueryAddress"), std::string::npos);

  ctx_.relay_events = true;
  auto handed = dispatchRequest(ctx_, Caller{1000, 1}, events(42, "n2", true));
  ASSERT_TRUE(handed.relay.has_value());
  EXPECT_TRUE(handed.reply.empty());
  EXPECT_EQ(handed.relay->job_id, 42u);
  EXPECT_EQ(handed.relay->node, "n2");
  EXPECT_TRUE(handed.relay->follow);
  // A node name no node has is refused here, not passed on.
  auto refused = dispatchRequest(ctx_, Caller{1000, 1}, events(42, std::string(256, 'n'), false));
  EXPECT_FALSE(refused.relay.has_value());
  EXPECT_EQ(flatbuffers::GetRoot<fb::Reply>(refused.reply.data())->outcome(),
            fb::Outcome::BadRequest);
  // Every other request is answered as before.
  auto status = dispatchRequest(ctx_, Caller{1000, 1}, simple(fb::RequestBody::StatusRequest));
  EXPECT_FALSE(status.relay.has_value());
  EXPECT_EQ(flatbuffers::GetRoot<fb::Reply>(status.reply.data())->outcome(), fb::Outcome::Ok);
}

// The hooks' rows carry their duration metric; a refused hook and other
// requests are not timed.
TEST_F(ControlHandlerTest, TheHooksAloneAreTimed) {
  AgentMetrics metrics;
  ctx_.metrics = &metrics;
  EXPECT_EQ(call(0, prolog(45, 1000, ""))->outcome(), fb::Outcome::Ok);
  EXPECT_EQ(call(1000, prolog(46, 1000, ""))->outcome(), fb::Outcome::PermissionDenied);
  EXPECT_EQ(call(1000, simple(fb::RequestBody::StatusRequest))->outcome(), fb::Outcome::Ok);
  EXPECT_EQ(metrics.prolog_seconds.snapshot().count, 1u);
  EXPECT_EQ(metrics.epilog_seconds.snapshot().count, 0u);
  EXPECT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, 45))->outcome(), fb::Outcome::Ok);
  EXPECT_EQ(metrics.epilog_seconds.snapshot().count, 1u);
  ctx_.metrics = nullptr;
}

TEST_F(ControlHandlerTest, SlurmUserMayRunHooksOrdinaryUserMayNot) {
  EXPECT_EQ(call(64030, prolog(43, 1000, ""))->outcome(), fb::Outcome::Ok);
  auto* r = call(1000, prolog(44, 1000, ""));
  EXPECT_EQ(r->outcome(), fb::Outcome::PermissionDenied);
  EXPECT_FALSE(manager_->job(44).has_value());
  EXPECT_EQ(call(1000, simple(fb::RequestBody::EpilogRequest, 43))->outcome(),
            fb::Outcome::PermissionDenied);
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
  EXPECT_EQ(call(1000, simple(fb::RequestBody::StatusRequest))->body_as_StatusInfo()->jobs(), 1u);
  EXPECT_EQ(call(0, simple(fb::RequestBody::StatusRequest))->body_as_StatusInfo()->jobs(), 2u);
}

// `accelctl status` by a user: the node's state, and of the jobs only the
// caller's own: the job count, the devices held, and which job a fault was of.
TEST_F(ControlHandlerTest, StatusShowsAUserOnlyItsOwnJobs) {
  NodeHealth health;
  ctx_.health = &health;
  ASSERT_EQ(call(0, prolog(70, 1000, "0"))->outcome(), fb::Outcome::Ok);
  ASSERT_EQ(call(0, prolog(71, 2000, "1"))->outcome(), fb::Outcome::Ok);
  // GPU 1 is job 71's: job 72 fails, and its record stays (user 2000's).
  ASSERT_EQ(call(0, prolog(72, 2000, "1"))->outcome(), fb::Outcome::NodeFault);
  auto devices_of = [](const fb::StatusInfo* s) {
    std::map<std::string, uint32_t> d;
    for (const auto* u : *s->device_use()) d[u->name()->str()] = u->job_id();
    return d;
  };
  auto errors_of = [](const fb::StatusInfo* s) {
    std::string all;
    for (const auto* e : *s->errors()) all += e->message()->str() + "\n";
    for (const auto* e : *s->last_errors()) all += e->str() + "\n";
    return all;
  };
  const auto* root = call(0, simple(fb::RequestBody::StatusRequest))->body_as_StatusInfo();
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->jobs(), 3u);
  EXPECT_EQ(devices_of(root).size(), 2u);
  EXPECT_NE(errors_of(root).find("prolog: job 72: "), std::string::npos) << errors_of(root);
  const auto* mine = call(1000, simple(fb::RequestBody::StatusRequest))->body_as_StatusInfo();
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(mine->jobs(), 1u);
  EXPECT_EQ(mine->devices_in_use(), 2u) << "the node's use is the node's";
  auto d = devices_of(mine);
  ASSERT_EQ(d.size(), 1u) << "GPU 1, job 71's, is left out";
  EXPECT_EQ(d.begin()->second, 70u);
  const std::string errors = errors_of(mine);
  EXPECT_EQ(errors.find("72"), std::string::npos) << errors;
  EXPECT_NE(errors.find("prolog: a job of another user"), std::string::npos) << errors;
  const auto* theirs = call(2000, simple(fb::RequestBody::StatusRequest))->body_as_StatusInfo();
  ASSERT_NE(theirs, nullptr);
  EXPECT_EQ(theirs->jobs(), 2u);
  EXPECT_EQ(devices_of(theirs).begin()->second, 71u);
  EXPECT_NE(errors_of(theirs).find("prolog: job 72: "), std::string::npos)
      << "a user reads its own job's fault";
  ctx_.health = nullptr;
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
  const std::vector<uint8_t> crash = {0x14, 0x0,  0x0, 0x0, 0x41, 0x43, 0x52, 0x51, 0x0, 0x0, 0x8,
                                      0x0,  0xc,  0x0, 0x0, 0x0,  0x7,  0x0,  0x8,  0x0, 0xa, 0x0,
                                      0x0,  0x0,  0x0, 0x0, 0x0,  0x2,  0xc,  0x0,  0x0, 0x0, 0x88,
                                      0x0,  0xc,  0x0, 0x4, 0x0,  0x8,  0x0,  0x8,  0x0, 0x0, 0x0,
                                      0x2a, 0x5b, 0x0, 0x0, 0xe8, 0x3,  0x0,  0x0};
  EXPECT_EQ(call(0, crash)->outcome(), fb::Outcome::BadRequest);
  for (auto kind : {fb::RequestBody::PrologRequest, fb::RequestBody::EpilogRequest,
                    fb::RequestBody::JobRequest, fb::RequestBody::TaskRequest,
                    fb::RequestBody::StepRequest, fb::RequestBody::StatusRequest}) {
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
      fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest,
                                   fb::CreatePrologRequest(fbb, spec).Union()),
                 fb::RequestIdentifier());
      std::vector<uint8_t> v(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
      bool clean = std::string(user) == "ok" && std::string(gpus).empty();
      EXPECT_EQ(call(0, v)->outcome(), clean ? fb::Outcome::Ok : fb::Outcome::BadRequest)
          << user << " " << gpus;
    }
  }
  EXPECT_EQ(manager_->stats().jobs, 1u);
}

TEST_F(ControlHandlerTest, UnknownVersionAndMissingJobIdAreRefused) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::CreateRequest(fbb, 99, fb::RequestBody::StatusRequest,
                               fb::CreateStatusRequest(fbb).Union()),
             fb::RequestIdentifier());
  std::vector<uint8_t> v(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  EXPECT_EQ(call(0, v)->outcome(), fb::Outcome::BadRequest);
  EXPECT_EQ(call(0, prolog(0, 1000, ""))->outcome(), fb::Outcome::BadRequest);
}

// Every node of a job tells the event stream the job's nodes, and names the
// job's partition and its IPUs alike (the aggregator counts them once).
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
  agent::JobManager m(agent::JobStore(root_ + "/state2"), accel::agentd::testing::twoGpuInventory(),
                      std::move(steps), clock_);
  ASSERT_TRUE(m.recover().ok());
  std::vector<event::Event> events;
  ctx_.manager = &m;
  support::RecordingEvents sink(&events);
  ctx_.events = &sink;
  for (const char* node : {"sbn1", "sbn2"}) {
    SCOPED_TRACE(node);
    events.clear();
    flatbuffers::FlatBufferBuilder fbb;
    // Two IPUs, two tasks (the plugin's SPANK_ACCEL_NTASKS): a GCD each.
    auto spec = fb::CreateJobSpecDirect(fbb, 90, 1000, 1000, "alice", node, "debug", "", 2, 0, 2,
                                        -1, 0, 0, "sbn[1-2]", 2);
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest,
                                 fb::CreatePrologRequest(fbb, spec).Union()),
               fb::RequestIdentifier());
    ASSERT_EQ(call(0, {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()})->outcome(),
              fb::Outcome::Ok);
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
  ctx_.manager = manager_.get();
}

// A job whose appliance limit nothing on the node measures (no appliance, no
// IPUs, no GPUs of its own there): its prolog's event and the answer its steps
// get say so; a GPU job's limit, or any job's where the node reads an
// appliance, is measured and says nothing.
TEST_F(ControlHandlerTest, ALimitNothingHereMeasuresIsToldToTheJobAndTheEvents) {
  std::vector<event::Event> events;
  support::RecordingEvents sink(&events);
  ctx_.events = &sink;
  auto limited = [](uint32_t job, const char* gpus) {
    flatbuffers::FlatBufferBuilder fbb;
    auto spec =
        fb::CreateJobSpecDirect(fbb, job, 1000, 1000, "alice", "n1", "debug", gpus, 0, 0, 0, 30);
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest,
                                 fb::CreatePrologRequest(fbb, spec).Union()),
               fb::RequestIdentifier());
    return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  };
  auto warnings = [this](uint32_t job) {
    std::vector<std::string> out;
    auto* info = call(1000, simple(fb::RequestBody::JobRequest, job))->body_as_JobInfo();
    if (info != nullptr && info->warnings() != nullptr)
      for (const auto* w : *info->warnings()) out.push_back(w->str());
    return out;
  };
  auto unmeasured = [&events]() {
    auto* finished = std::get_if<event::PrologFinished>(&events.back());
    return finished != nullptr && finished->limit_unmeasured;
  };
  auto kind = [&events]() {
    auto* finished = std::get_if<event::PrologFinished>(&events.back());
    return finished != nullptr ? finished->accel_kind : std::string("(none)");
  };
  ASSERT_EQ(call(0, limited(60, ""))->outcome(), fb::Outcome::Ok);
  EXPECT_TRUE(unmeasured());
  EXPECT_EQ(kind(), "") << "no appliance, no IPUs, no GPUs: no kind";
  auto w = warnings(60);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "the appliance time limit of 30 s cannot be measured on n1 and is not enforced there: "
            "the job "
            "holds no IPUs or GPUs there and the node reads no appliance");
  ASSERT_EQ(call(0, limited(61, "1"))->outcome(), fb::Outcome::Ok);
  EXPECT_FALSE(unmeasured()) << "a GPU job's steps run its clock";
  EXPECT_TRUE(warnings(61).empty());
  NoApplianceJobs appliance;
  ctx_.appliance = &appliance;
  ASSERT_EQ(call(0, limited(62, ""))->outcome(), fb::Outcome::Ok);
  EXPECT_FALSE(unmeasured()) << "the node reads an appliance";
  EXPECT_EQ(kind(), "appliance");
  EXPECT_TRUE(warnings(62).empty());
  EXPECT_TRUE(warnings(60).empty()) << "measured now that the node reads an appliance";
  ASSERT_EQ(call(0, prolog(63, 1000, ""))->outcome(), fb::Outcome::Ok);
  EXPECT_FALSE(unmeasured()) << "no limit, nothing to measure";
  for (uint32_t job : {60u, 61u, 62u, 63u})
    EXPECT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, job))->outcome(), fb::Outcome::Ok);
}

// ApplianceTimeOnRequeue=cumulative: before the prolog of a later run the
// handler asks what the earlier runs used; the record's budget carries it. When
// it cannot be read, the run starts with the whole limit and its steps are
// told why. A first run, or a job without a limit, asks nothing.
TEST_F(ControlHandlerTest, ALaterRunCarriesWhatTheEarlierRunsUsed) {
  std::vector<uint32_t> asked;
  Result<int64_t> answer = int64_t{4'000'000'000};
  ctx_.earlier_runs_used_ns = [&](uint32_t job) -> Result<int64_t> {
    asked.push_back(job);
    return answer;
  };
  // Each job holds a GPU of its own, so its limit is measured here.
  auto run = [](uint32_t job, uint32_t restarts, int64_t limit, const char* gpu) {
    flatbuffers::FlatBufferBuilder fbb;
    auto spec = fb::CreateJobSpecDirect(fbb, job, 1000, 1000, "alice", "n1", "debug", gpu, 0, 0, 0,
                                        limit, 0, 0, nullptr, 0, nullptr, false, restarts);
    fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest,
                                 fb::CreatePrologRequest(fbb, spec).Union()),
               fb::RequestIdentifier());
    return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  };
  ASSERT_EQ(call(0, run(70, 0, 10, "0"))->outcome(), fb::Outcome::Ok);
  ASSERT_EQ(call(0, run(71, 2, -1, ""))->outcome(), fb::Outcome::Ok);
  EXPECT_TRUE(asked.empty()) << "a first run, or no limit: nothing to carry";
  ASSERT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, 70))->outcome(), fb::Outcome::Ok);
  ASSERT_EQ(call(0, run(72, 1, 10, "0"))->outcome(), fb::Outcome::Ok);
  EXPECT_EQ(asked, std::vector<uint32_t>{72});
  EXPECT_EQ(manager_->job(72)->budget.carried_ns, 4'000'000'000);
  auto* info = call(1000, simple(fb::RequestBody::JobRequest, 72))->body_as_JobInfo();
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->warnings(), nullptr);
  answer = Error(ErrorCode::kNotFound, "no summary of the job's earlier runs in accounting yet");
  ASSERT_EQ(call(0, run(73, 1, 10, "1"))->outcome(), fb::Outcome::Ok);
  EXPECT_EQ(manager_->job(73)->budget.carried_ns, 0);
  info = call(1000, simple(fb::RequestBody::JobRequest, 73))->body_as_JobInfo();
  ASSERT_NE(info, nullptr);
  ASSERT_NE(info->warnings(), nullptr);
  ASSERT_EQ(info->warnings()->size(), 1u);
  EXPECT_EQ(info->warnings()->Get(0)->str(),
            "the appliance time the job's earlier runs used could not be read (no summary of the "
            "job's earlier "
            "runs in accounting yet); this run starts with the whole limit");
  for (uint32_t job : {71u, 72u, 73u})
    EXPECT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, job))->outcome(), fb::Outcome::Ok);
}

// The prolog of a job on node `node` of sbn[1-3] asking for `ipus` IPUs (0:
// none) and the GPUs `gpus`.
std::vector<uint8_t> kindProlog(uint32_t job, const char* node, uint32_t ipus,
                                const char* gpus = "") {
  flatbuffers::FlatBufferBuilder fbb;
  auto spec = fb::CreateJobSpecDirect(fbb, job, 1000, 1000, "alice", node, "debug", gpus, ipus, 0,
                                      0, -1, 0, 0, "sbn[1-3]", 3);
  fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest,
                               fb::CreatePrologRequest(fbb, spec).Union()),
             fb::RequestIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

// What the agent decides for each job on a node without a V-IPU controller
// and without IPUs of its own (a GPU node): a job without IPUs runs and
// drains nothing; an IPU job fails (the hook's UserError: exit 0) with the
// reason in its record and its PrologFinished event, and the node is drained
// once, also when the prolog runs again. The drain is queued, never waited
// for.
TEST_F(ControlHandlerTest, IpuJobOnANodeWithoutIpusFailsAndDrainsThisNodeOnce) {
  manager_->setNoIpuController("no vipu.conf beside /etc/slurm/accel.conf");
  std::vector<std::pair<std::string, std::string>> drained;
  std::mutex mu;
  NodeDrainer drainer([&](const std::string& node, const std::string& reason) {
    std::lock_guard<std::mutex> g(mu);
    drained.emplace_back(node, reason);
    return okStatus();
  });
  ctx_.drainer = &drainer;
  support::FakeClock health_clock{7};
  NodeHealth health(health_clock);
  ctx_.health = &health;
  std::vector<event::Event> events;
  support::RecordingEvents sink(&events);
  ctx_.events = &sink;

  auto* gpu = call(0, kindProlog(95, "sbn1", 0, "1"));
  ASSERT_EQ(gpu->outcome(), fb::Outcome::Ok) << gpu->message()->str();
  EXPECT_FALSE(gpu->drains_node());
  ASSERT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, 95))->outcome(), fb::Outcome::Ok);
  drainer.waitIdle();
  EXPECT_TRUE(drained.empty());

  const std::string why =
      "this node (sbn1) has no V-IPU controller (no vipu.conf beside /etc/slurm/accel.conf) and no "
      "IPUs of its own, "
      "yet the job asked for 2 IPUs: a fault of the cluster's configuration, not of the job";
  for (int attempt = 0; attempt < 2; ++attempt) {
    SCOPED_TRACE(attempt);
    events.clear();
    auto* r = call(0, kindProlog(96, "sbn1", 2));
    EXPECT_EQ(r->outcome(), fb::Outcome::UserError);
    EXPECT_TRUE(r->drains_node());
    EXPECT_EQ(r->message()->str(), why);
    ASSERT_EQ(events.size(), 2u);
    auto* finished = std::get_if<event::PrologFinished>(&events[1]);
    ASSERT_NE(finished, nullptr);
    EXPECT_EQ(finished->result, event::JobResult::kFailed);
    EXPECT_EQ(finished->message, why);
    auto* job = call(0, simple(fb::RequestBody::JobRequest, 96))->body_as_JobInfo();
    ASSERT_NE(job, nullptr);
    EXPECT_EQ(job->state(), fb::JobState::Failed);
    EXPECT_EQ(job->last_error()->str(), why);
  }
  drainer.waitIdle();
  ASSERT_EQ(drained.size(), 1u) << "a prolog run again drains no second time";
  EXPECT_EQ(drained[0].first, "sbn1");
  EXPECT_EQ(
      drained[0].second,
      "accel: job 96 asked for IPUs but this node has no V-IPU controller (no vipu.conf beside "
      "/etc/slurm/accel.conf); check the Slurm partition's nodes");
  auto snap = health.snapshot();
  ASSERT_EQ(snap.errors.size(), 2u);
  EXPECT_EQ(snap.errors[0].message,
            "configuration fault: job 96 asked for IPUs but this node has no V-IPU controller (no "
            "vipu.conf beside "
            "/etc/slurm/accel.conf); check the Slurm partition's nodes; this node is drained");
  ASSERT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, 96))->outcome(), fb::Outcome::Ok);

  // Another IPU job is another drain (of a node that is drained already).
  EXPECT_EQ(call(0, kindProlog(97, "sbn1", 1))->outcome(), fb::Outcome::UserError);
  drainer.waitIdle();
  EXPECT_EQ(drained.size(), 2u);
  ASSERT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, 97))->outcome(), fb::Outcome::Ok);

  // Without a way to drain, the job still fails and says so; nothing claims a drain.
  ctx_.drainer = nullptr;
  auto* undrained = call(0, kindProlog(98, "sbn1", 2));
  EXPECT_EQ(undrained->outcome(), fb::Outcome::UserError);
  EXPECT_FALSE(undrained->drains_node());
  ASSERT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, 98))->outcome(), fb::Outcome::Ok);
  ctx_.health = nullptr;
}

// A node with a V-IPU controller (never told otherwise) or with IPUs of its
// own serves IPU jobs: nothing is drained.
TEST_F(ControlHandlerTest, IpuJobOnAnIpuNodeDrainsNothing) {
  std::atomic<int> drains{0};
  NodeDrainer drainer([&](const std::string&, const std::string&) {
    ++drains;
    return okStatus();
  });
  ctx_.drainer = &drainer;
  auto* pod = call(0, kindProlog(100, "sbn1", 2));
  ASSERT_EQ(pod->outcome(), fb::Outcome::Ok) << pod->message()->str();
  EXPECT_FALSE(pod->drains_node());
  ASSERT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, 100))->outcome(), fb::Outcome::Ok);

  agent::Inventory inv = accel::agentd::testing::twoGpuInventory();
  agent::InventoryDevice card;
  card.slot = {2, "ipu", 0};
  card.name = "ipu0";
  inv.devices.push_back(card);
  inv.device_distance.assign(3, std::vector<int>(3, 0));
  inv.nic_distance.assign(3, 0);
  manager_->replaceInventory(inv);
  manager_->setNoIpuController("no vipu.conf beside /etc/slurm/accel.conf");
  auto* cards = call(0, kindProlog(101, "sbn1", 1));
  ASSERT_EQ(cards->outcome(), fb::Outcome::Ok) << cards->message()->str();
  ASSERT_EQ(cards->body_as_JobInfo()->devices()->size(), 1u);
  EXPECT_EQ(cards->body_as_JobInfo()->devices()->Get(0)->index(), 2u);
  ASSERT_EQ(call(0, simple(fb::RequestBody::EpilogRequest, 101))->outcome(), fb::Outcome::Ok);
  drainer.waitIdle();
  EXPECT_EQ(drains.load(), 0);
  ctx_.drainer = nullptr;
}

}  // namespace
}  // namespace accel::agentd
