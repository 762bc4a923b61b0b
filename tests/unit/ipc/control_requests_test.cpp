// The control requests built in one place: each kind verifies as a Request
// and carries every value it was given.
#include "accel/ipc/control_requests.h"

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include "accel/schemas/control_generated.h"

namespace accel::ipc {
namespace {

namespace fb = accel::control;

// The request in `bytes`, once it verifies; nullptr otherwise.
const fb::Request* verified(const std::vector<uint8_t>& bytes) {
  flatbuffers::Verifier v(bytes.data(), bytes.size());
  if (!fb::VerifyRequestBuffer(v)) return nullptr;
  if (!fb::RequestBufferHasIdentifier(bytes.data())) return nullptr;
  return fb::GetRequest(bytes.data());
}

TEST(ControlRequests, PrologCarriesEveryField) {
  JobSpecFields j;
  j.job_id = 42;
  j.uid = 1001;
  j.gid = 1002;
  j.user = "alice";
  j.node = "n1";
  j.partition = "gpu";
  j.gpus = "0,2";
  j.ipus = 4;
  j.num_replicas = 2;
  j.ntasks = 8;
  j.appliance_time_sec = 3600;
  j.appliance_signal = 10;
  j.appliance_signal_lead_sec = 60;
  j.node_list = "n[1-3]";
  j.node_count = 3;
  j.refusal = "refused: bad option";
  j.appliance_signal_batch = true;
  j.restart_count = 2;
  const auto bytes = encodePrologRequest(j);
  const auto* r = verified(bytes);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->version(), 1);
  ASSERT_EQ(r->body_type(), fb::RequestBody::PrologRequest);
  const auto* s = r->body_as_PrologRequest()->job();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->job_id(), 42u);
  EXPECT_EQ(s->uid(), 1001u);
  EXPECT_EQ(s->gid(), 1002u);
  EXPECT_EQ(s->user()->str(), "alice");
  EXPECT_EQ(s->node()->str(), "n1");
  EXPECT_EQ(s->partition()->str(), "gpu");
  EXPECT_EQ(s->gpus()->str(), "0,2");
  EXPECT_EQ(s->ipus(), 4u);
  EXPECT_EQ(s->num_replicas(), 2u);
  EXPECT_EQ(s->ntasks(), 8u);
  EXPECT_EQ(s->appliance_time_sec(), 3600);
  EXPECT_EQ(s->appliance_signal(), 10);
  EXPECT_EQ(s->appliance_signal_lead_sec(), 60u);
  EXPECT_EQ(s->node_list()->str(), "n[1-3]");
  EXPECT_EQ(s->node_count(), 3u);
  ASSERT_NE(s->refusal(), nullptr);
  EXPECT_EQ(s->refusal()->str(), "refused: bad option");
  EXPECT_TRUE(s->appliance_signal_batch());
  EXPECT_EQ(s->restart_count(), 2u);
}

// Defaults: no limit (-1), empty strings sent as empty, no refusal at all.
TEST(ControlRequests, PrologDefaultsLeaveRefusalOut) {
  JobSpecFields j;
  j.job_id = 7;
  const auto bytes = encodePrologRequest(j);
  const auto* r = verified(bytes);
  ASSERT_NE(r, nullptr);
  const auto* s = r->body_as_PrologRequest()->job();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->job_id(), 7u);
  EXPECT_EQ(s->appliance_time_sec(), -1);
  ASSERT_NE(s->user(), nullptr);
  EXPECT_EQ(s->user()->str(), "");
  ASSERT_NE(s->gpus(), nullptr);
  EXPECT_EQ(s->gpus()->str(), "");
  ASSERT_NE(s->node_list(), nullptr);
  EXPECT_EQ(s->node_list()->str(), "");
  EXPECT_EQ(s->refusal(), nullptr);
  EXPECT_FALSE(s->appliance_signal_batch());
  EXPECT_EQ(s->restart_count(), 0u);
}

TEST(ControlRequests, Epilog) {
  const auto bytes = encodeEpilogRequest(42, 1001);
  const auto* r = verified(bytes);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->version(), 1);
  const auto* e = r->body_as_EpilogRequest();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->job_id(), 42u);
  EXPECT_EQ(e->uid(), 1001u);
}

TEST(ControlRequests, StatusJobsAndJob) {
  auto status = encodeStatusRequest();
  const auto* r = verified(status);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->version(), 1);
  EXPECT_NE(r->body_as_StatusRequest(), nullptr);

  auto jobs = encodeJobsRequest();
  r = verified(jobs);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->version(), 1);
  EXPECT_NE(r->body_as_JobsRequest(), nullptr);

  auto job = encodeJobRequest(99);
  r = verified(job);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->version(), 1);
  ASSERT_NE(r->body_as_JobRequest(), nullptr);
  EXPECT_EQ(r->body_as_JobRequest()->job_id(), 99u);
}

TEST(ControlRequests, Task) {
  auto started = encodeTaskRequest(42, 3, 12345, 987654321ull, TaskEventKind::kStarted, 0);
  const auto* r = verified(started);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->version(), 1);
  const auto* t = r->body_as_TaskRequest();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->job_id(), 42u);
  EXPECT_EQ(t->step_id(), 3u);
  EXPECT_EQ(t->pid(), 12345);
  EXPECT_EQ(t->start_ticks(), 987654321ull);
  EXPECT_EQ(t->kind(), fb::TaskEventKind::Started);
  EXPECT_EQ(t->exit_status(), 0);

  auto exited = encodeTaskRequest(42, 3, 12345, 5, TaskEventKind::kExited, 256);
  r = verified(exited);
  ASSERT_NE(r, nullptr);
  t = r->body_as_TaskRequest();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->kind(), fb::TaskEventKind::Exited);
  EXPECT_EQ(t->exit_status(), 256);
}

TEST(ControlRequests, Step) {
  auto started = encodeStepRequest(42, 0xfffffffbu, StepEventKind::kStarted, 0);
  const auto* r = verified(started);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->version(), 1);
  const auto* s = r->body_as_StepRequest();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->job_id(), 42u);
  EXPECT_EQ(s->step_id(), 0xfffffffbu);
  EXPECT_EQ(s->kind(), fb::StepEventKind::Started);
  EXPECT_EQ(s->exit_code(), 0);

  auto ended = encodeStepRequest(42, 1, StepEventKind::kEnded, -9);
  r = verified(ended);
  ASSERT_NE(r, nullptr);
  s = r->body_as_StepRequest();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->step_id(), 1u);
  EXPECT_EQ(s->kind(), fb::StepEventKind::Ended);
  EXPECT_EQ(s->exit_code(), -9);
}

TEST(ControlRequests, Surrogate) {
  auto bytes = encodeSurrogateRequest(42, 4, "wsjob-abc");
  const auto* r = verified(bytes);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->version(), 1);
  const auto* s = r->body_as_SurrogateRequest();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->job_id(), 42u);
  EXPECT_EQ(s->step_id(), 4u);
  ASSERT_NE(s->appliance_job(), nullptr);
  EXPECT_EQ(s->appliance_job()->str(), "wsjob-abc");
}

TEST(ControlRequests, EventsWithAndWithoutNode) {
  auto one = encodeEventsRequest(42, "n2", true, false);
  const auto* r = verified(one);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->version(), 1);
  const auto* e = r->body_as_EventsRequest();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->job_id(), 42u);
  ASSERT_NE(e->node(), nullptr);
  EXPECT_EQ(e->node()->str(), "n2");
  EXPECT_TRUE(e->follow());
  EXPECT_FALSE(e->json());

  auto all = encodeEventsRequest(43, "", false, true);
  r = verified(all);
  ASSERT_NE(r, nullptr);
  e = r->body_as_EventsRequest();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->job_id(), 43u);
  EXPECT_EQ(e->node(), nullptr);
  EXPECT_FALSE(e->follow());
  EXPECT_TRUE(e->json());
}

}  // namespace
}  // namespace accel::ipc
