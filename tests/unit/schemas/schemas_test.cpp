// Every message of schemas/ is built, verified and read back; truncated and
// garbage buffers must fail verification.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "accel/schemas/control_generated.h"
#include "accel/schemas/events_generated.h"
#include "accel/schemas/query_generated.h"

namespace {

using namespace accel;

std::vector<uint8_t> bytesOf(flatbuffers::FlatBufferBuilder& fbb) {
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

bool verifyRequest(const std::vector<uint8_t>& b) {
  flatbuffers::Verifier v(b.data(), b.size());
  return control::VerifyRequestBuffer(v);
}

bool verifyReply(const std::vector<uint8_t>& b) {
  flatbuffers::Verifier v(b.data(), b.size());
  return v.VerifyBuffer<control::Reply>(nullptr);
}

bool verifyEnvelope(const std::vector<uint8_t>& b) {
  flatbuffers::Verifier v(b.data(), b.size());
  return events::VerifyEnvelopeBuffer(v);
}

bool verifyQuery(const std::vector<uint8_t>& b) {
  flatbuffers::Verifier v(b.data(), b.size());
  return query::VerifyMessageBuffer(v);
}

std::vector<uint8_t> prologRequest() {
  flatbuffers::FlatBufferBuilder fbb;
  auto spec = control::CreateJobSpecDirect(fbb, 42, 1000, 1000, "alice", "node1", "debug", "0,2", 4,
                                           2, 2, 600, 10, 60);
  auto body = control::CreatePrologRequest(fbb, spec);
  fbb.Finish(control::CreateRequest(fbb, 1, control::RequestBody::PrologRequest, body.Union()),
             control::RequestIdentifier());
  return bytesOf(fbb);
}

TEST(ControlSchemaTest, PrologRequestRoundTrips) {
  auto b = prologRequest();
  ASSERT_TRUE(verifyRequest(b));
  auto* req = control::GetRequest(b.data());
  ASSERT_EQ(req->body_type(), control::RequestBody::PrologRequest);
  auto* job = req->body_as_PrologRequest()->job();
  EXPECT_EQ(job->job_id(), 42u);
  EXPECT_EQ(job->user()->str(), "alice");
  EXPECT_EQ(job->gpus()->str(), "0,2");
  EXPECT_EQ(job->ipus(), 4u);
  EXPECT_EQ(job->appliance_time_sec(), 600);
}

TEST(ControlSchemaTest, EveryRequestKindVerifies) {
  for (auto kind : {control::RequestBody::EpilogRequest, control::RequestBody::StatusRequest,
                    control::RequestBody::JobsRequest, control::RequestBody::JobRequest}) {
    flatbuffers::FlatBufferBuilder fbb;
    flatbuffers::Offset<void> body;
    switch (kind) {
      case control::RequestBody::EpilogRequest:
        body = control::CreateEpilogRequest(fbb, 7, 0).Union();
        break;
      case control::RequestBody::StatusRequest:
        body = control::CreateStatusRequest(fbb).Union();
        break;
      case control::RequestBody::JobsRequest:
        body = control::CreateJobsRequest(fbb).Union();
        break;
      default:
        body = control::CreateJobRequest(fbb, 7).Union();
        break;
    }
    fbb.Finish(control::CreateRequest(fbb, 1, kind, body), control::RequestIdentifier());
    auto b = bytesOf(fbb);
    ASSERT_TRUE(verifyRequest(b)) << control::EnumNameRequestBody(kind);
    EXPECT_EQ(control::GetRequest(b.data())->body_type(), kind);
  }
}

TEST(ControlSchemaTest, ReplyWithJobInfoRoundTrips) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<control::Device>> devs{
      control::CreateDeviceDirect(fbb, control::DeviceKind::Gpu, 0, "cuda0", "0000:04:00.0")};
  std::vector<flatbuffers::Offset<control::EnvVar>> env{
      control::CreateEnvVarDirect(fbb, "ACCEL_DEVICES", "cuda0")};
  auto info = control::CreateJobInfoDirect(fbb, 42, 1000, "alice", control::JobState::Ready, &devs,
                                           "/run/accel-agent/jobs/42", &env, 1, 2);
  fbb.Finish(control::CreateReplyDirect(fbb, control::Outcome::Ok, "", control::ReplyBody::JobInfo,
                                        info.Union()));
  auto b = bytesOf(fbb);
  ASSERT_TRUE(verifyReply(b));
  auto* reply = flatbuffers::GetRoot<control::Reply>(b.data());
  auto* job = reply->body_as_JobInfo();
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->state(), control::JobState::Ready);
  EXPECT_EQ(job->devices()->Get(0)->pci_bus_id()->str(), "0000:04:00.0");
  EXPECT_EQ(job->env()->Get(0)->value()->str(), "cuda0");
}

TEST(EventsSchemaTest, EveryEventRoundTrips) {
  for (auto kind : {events::Event::PrologStarted, events::Event::PrologFinished,
                    events::Event::EpilogFinished, events::Event::AgentStarted}) {
    flatbuffers::FlatBufferBuilder fbb;
    flatbuffers::Offset<void> ev;
    switch (kind) {
      case events::Event::PrologStarted:
        ev = events::CreatePrologStartedDirect(fbb, 5, 1000, "bob").Union();
        break;
      case events::Event::PrologFinished: {
        std::vector<flatbuffers::Offset<flatbuffers::String>> d{fbb.CreateString("cuda1")};
        ev = events::CreatePrologFinishedDirect(fbb, 5, events::JobResult::Ok, &d, "p5", 900, "")
                 .Union();
        break;
      }
      case events::Event::EpilogFinished:
        ev = events::CreateEpilogFinishedDirect(fbb, 5, events::JobResult::TimeLimit, 300, "")
                 .Union();
        break;
      default:
        ev = events::CreateAgentStartedDirect(fbb, "0.1.0", 3).Union();
        break;
    }
    fbb.Finish(events::CreateEnvelopeDirect(fbb, "node1", 77, 1234, 99, kind, ev),
               events::EnvelopeIdentifier());
    auto b = bytesOf(fbb);
    ASSERT_TRUE(verifyEnvelope(b)) << events::EnumNameEvent(kind);
    auto* env = events::GetEnvelope(b.data());
    EXPECT_EQ(env->seq(), 1234u);
    EXPECT_EQ(env->epoch(), 77u);
    EXPECT_EQ(env->event_type(), kind);
  }
}

TEST(QuerySchemaTest, AskAndAnswerRoundTrip) {
  flatbuffers::FlatBufferBuilder fbb;
  auto ask = query::CreateEventsAskDirect(fbb, 9, 42, 1000, false, 17, "node1", true, true);
  fbb.Finish(query::CreateMessage(fbb, query::Body::EventsAsk, ask.Union()),
             query::MessageIdentifier());
  auto b = bytesOf(fbb);
  ASSERT_TRUE(verifyQuery(b));
  const auto* a = query::GetMessage(b.data())->body_as_EventsAsk();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->id(), 9u);
  EXPECT_EQ(a->job_id(), 42u);
  EXPECT_EQ(a->uid(), 1000u);
  EXPECT_EQ(a->after_row(), 17);
  EXPECT_EQ(a->node()->str(), "node1");
  EXPECT_TRUE(a->json() && a->wait() && !a->admin());

  flatbuffers::FlatBufferBuilder out;
  std::vector<std::string> lines{"one", "two"};
  auto answer = query::CreateEventsAnswer(out, 9, query::Outcome::NotFound, out.CreateString("no"),
                                          out.CreateVectorOfStrings(lines), 17, true);
  out.Finish(query::CreateMessage(out, query::Body::EventsAnswer, answer.Union()),
             query::MessageIdentifier());
  auto c = bytesOf(out);
  ASSERT_TRUE(verifyQuery(c));
  const auto* r = query::GetMessage(c.data())->body_as_EventsAnswer();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->outcome(), query::Outcome::NotFound);
  ASSERT_EQ(r->lines()->size(), 2u);
  EXPECT_EQ(r->lines()->Get(1)->str(), "two");
  EXPECT_TRUE(r->more());
  // The outcomes mean what control.fbs's do.
  EXPECT_EQ(int(query::Outcome::NotFound), int(control::Outcome::NotFound));
  EXPECT_EQ(int(query::Outcome::Busy), int(control::Outcome::Busy));
  EXPECT_EQ(int(query::Outcome::BadRequest), int(control::Outcome::BadRequest));
}

TEST(ControlSchemaTest, EventsRequestAndEventLinesRoundTrip) {
  flatbuffers::FlatBufferBuilder fbb;
  auto body = control::CreateEventsRequestDirect(fbb, 42, "node1", true, false);
  fbb.Finish(control::CreateRequest(fbb, 1, control::RequestBody::EventsRequest, body.Union()),
             control::RequestIdentifier());
  auto b = bytesOf(fbb);
  ASSERT_TRUE(verifyRequest(b));
  const auto* e = control::GetRequest(b.data())->body_as_EventsRequest();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->job_id(), 42u);
  EXPECT_TRUE(e->follow());

  flatbuffers::FlatBufferBuilder out;
  std::vector<std::string> lines{"a"};
  auto lines_body = control::CreateEventLines(out, out.CreateVectorOfStrings(lines), true);
  out.Finish(control::CreateReply(out, control::Outcome::Ok, 0, control::ReplyBody::EventLines,
                                  lines_body.Union()));
  auto c = bytesOf(out);
  ASSERT_TRUE(verifyReply(c));
  const auto* l = flatbuffers::GetRoot<control::Reply>(c.data())->body_as_EventLines();
  ASSERT_NE(l, nullptr);
  EXPECT_TRUE(l->done());
  EXPECT_EQ(l->lines()->Get(0)->str(), "a");
}

TEST(SchemaRejectionTest, TruncationIsRefusedUnlessOnlyPaddingWasLost) {
  auto b = prologRequest();
  size_t refused = 0;
  for (size_t len = 0; len < b.size(); ++len) {
    std::vector<uint8_t> cut(b.begin(), b.begin() + static_cast<long>(len));
    if (!verifyRequest(cut)) {
      ++refused;
      continue;
    }
    // flatc may end a buffer with alignment padding no field points into; a cut
    // that drops only that must still read back exactly the original message.
    auto* job = control::GetRequest(cut.data())->body_as_PrologRequest()->job();
    EXPECT_EQ(job->job_id(), 42u) << "cut to " << len;
    EXPECT_EQ(job->user()->str(), "alice") << "cut to " << len;
    EXPECT_EQ(job->gpus()->str(), "0,2") << "cut to " << len;
    EXPECT_GE(len + 8, b.size()) << "a cut deep into the message verified: " << len;
  }
  EXPECT_GE(refused + 8, b.size());
}

TEST(SchemaRejectionTest, GarbageIsRefused) {
  std::mt19937 rng(12345);
  int accepted = 0;
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> g(8 + rng() % 256);
    for (auto& c : g) c = static_cast<uint8_t>(rng());
    if (verifyRequest(g) || verifyEnvelope(g) || verifyQuery(g)) ++accepted;
  }
  EXPECT_EQ(accepted, 0);
}

TEST(SchemaRejectionTest, WrongIdentifierIsRefused) {
  auto b = prologRequest();
  EXPECT_FALSE(verifyEnvelope(b));  // a control request is not an event
  EXPECT_FALSE(verifyQuery(b));     // nor a question to the aggregator
}

}  // namespace
