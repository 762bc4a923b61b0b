// `accelctl report` as the aggregator answers it (ReportAsk over a real
// ROUTER with CURVE, as accel-agentd asks): the owner and administrators get
// the job's report, with a running job's latest GPU progress; anyone else
// gets the very answer of a job that does not exist; a reused id answers for
// the latest job under it.
#include <chrono>
#include <optional>

#include "accel/aggregator/event_queries.h"
#include "accel/schemas/query_generated.h"
#include "server_fixture.h"

namespace accel::aggregator {
namespace {

using namespace std::chrono_literals;
namespace q = accel::query;

struct Reported {
  q::Outcome outcome = q::Outcome::Ok;
  std::string message, report;
};

class ReportQueriesTest : public test::QueryServerFixture {
 protected:
  void SetUp() override {
    QueryServerFixture::SetUp();
    startWithQueries();
  }
  // A GPU job of `uid` on n1 with one GPU, running.
  void gpuJob(uint32_t job, uint32_t uid) {
    record(event::PrologStarted{job, uid, "u" + std::to_string(uid), "n1", 1, 0});
    event::PrologFinished p{job};
    p.accel_kind = "gpu";
    p.devices = {"cuda0"};
    record(p);
  }
  std::optional<Reported> report(uint32_t job, uint32_t uid, bool admin = false) {
    flatbuffers::FlatBufferBuilder fbb;
    const uint64_t id = ++ask_id_;
    fbb.Finish(q::CreateMessage(fbb, q::Body::ReportAsk,
                                q::CreateReportAsk(fbb, id, job, uid, admin).Union()),
               q::MessageIdentifier());
    asker_->send(zmq::buffer(fbb.GetBufferPointer(), fbb.GetSize()));
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (std::chrono::steady_clock::now() < deadline) {
      zmq::message_t m;
      if (asker_->recv(m, zmq::recv_flags::dontwait)) {
        const auto* raw = static_cast<const uint8_t*>(m.data());
        const std::vector<uint8_t> bytes(raw, raw + m.size());
        flatbuffers::Verifier v(bytes.data(), bytes.size());
        EXPECT_TRUE(q::VerifyMessageBuffer(v));
        const auto* a = q::GetMessage(bytes.data())->body_as_ReportAnswer();
        if (!a || a->id() != id) return std::nullopt;
        return Reported{a->outcome(), a->message() ? a->message()->str() : "",
                        a->report() ? a->report()->str() : ""};
      }
      EXPECT_TRUE(server_->poll(5ms).ok());
    }
    return std::nullopt;
  }

  uint64_t ask_id_ = 0;
};

event::GpuDeviceFigures busy(uint64_t samples) {
  event::GpuDeviceFigures d;
  d.samples = samples;
  d.util_mean_pct = 40;
  d.util_max_pct = 90;
  d.memory_used_max_mib = 2048;
  return d;
}

TEST_F(ReportQueriesTest, TheOwnerSeesTheLiveFiguresOthersGetTheUnknownJobsAnswer) {
  gpuJob(7, 1000);
  record(event::GpuProgress{7, 0, event::GpuFigures{3, {busy(3)}}});

  auto mine = report(7, 1000);
  ASSERT_TRUE(mine);
  ASSERT_EQ(mine->outcome, q::Outcome::Ok) << mine->message;
  const auto r = nlohmann::json::parse(mine->report);
  EXPECT_EQ(r["state"], "running");
  EXPECT_EQ(r["line"], "holds 1 GPU, uses 1 of them, mean 40% so far");
  EXPECT_EQ(r["devices"][0]["memory_max_mib"], 2048);

  auto admin = report(7, 0, true);
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->report, mine->report);

  auto other = report(7, 2000);
  auto unknown = report(999, 2000);
  ASSERT_TRUE(other && unknown);
  EXPECT_EQ(other->outcome, q::Outcome::NotFound);
  EXPECT_EQ(other->message, "no report of job 7 of yours: the aggregator has no record of it");
  EXPECT_EQ(other->report, "");
  // The same words for a job that does not exist, but for its number.
  EXPECT_EQ(unknown->outcome, other->outcome);
  EXPECT_EQ(unknown->message, "no report of job 999 of yours: the aggregator has no record of it");
  auto admin_unknown = report(999, 0, true);
  ASSERT_TRUE(admin_unknown);
  EXPECT_EQ(admin_unknown->outcome, q::Outcome::NotFound);
  EXPECT_EQ(admin_unknown->message, unknown->message);
}

TEST_F(ReportQueriesTest, AFinishedJobShowsItsEpilogsFigures) {
  gpuJob(8, 1000);
  record(event::GpuProgress{8, 0, event::GpuFigures{1, {busy(1)}}});
  event::EpilogFinished e{8};
  auto d = busy(20);
  d.util_mean_pct = 10;
  e.gpu = event::GpuFigures{20, {d}, {}, 0};
  record(e);
  auto mine = report(8, 1000);
  ASSERT_TRUE(mine);
  ASSERT_EQ(mine->outcome, q::Outcome::Ok) << mine->message;
  const auto r = nlohmann::json::parse(mine->report);
  EXPECT_EQ(r["state"], "finished");
  EXPECT_EQ(r["line"], "held 1 GPU, used 1 of them, mean 10%");
  EXPECT_EQ(r["devices"][0]["samples"], 20);
}

}  // namespace
}  // namespace accel::aggregator
