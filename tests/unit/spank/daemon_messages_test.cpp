#include "accel/spank/daemon_messages.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "accel/ipc/control_requests.h"
#include "accel/schemas/control_generated.h"

namespace accel::spank {
namespace {

namespace fb = accel::control;

const fb::Request* verified(const std::vector<std::uint8_t>& bytes) {
  flatbuffers::Verifier v(bytes.data(), bytes.size());
  EXPECT_TRUE(fb::VerifyRequestBuffer(v));
  EXPECT_TRUE(fb::RequestBufferHasIdentifier(bytes.data()));
  const auto* r = fb::GetRequest(bytes.data());
  EXPECT_EQ(r->version(), 1);
  return r;
}

std::vector<std::uint8_t> jobReply(fb::JobState state,
                                   std::vector<std::pair<std::string, std::string>> env,
                                   const std::string& last_error = "") {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::EnvVar>> vars;
  for (const auto& [k, v] : env) vars.push_back(fb::CreateEnvVarDirect(fbb, k.c_str(), v.c_str()));
  auto info = fb::CreateJobInfoDirect(fbb, 42, 1001, "alice", state, nullptr, "/run/j/42", &vars, 0,
                                      0, last_error.c_str());
  fbb.Finish(fb::CreateReplyDirect(fbb, fb::Outcome::Ok, "", fb::ReplyBody::JobInfo, info.Union()));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<std::uint8_t> bareReply(fb::Outcome outcome, const std::string& message) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::CreateReplyDirect(fbb, outcome, message.c_str()));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

TEST(Encode, JobRequest) {
  auto bytes = ipc::encodeJobRequest(42);
  const auto* r = verified(bytes);
  ASSERT_EQ(r->body_type(), fb::RequestBody::JobRequest);
  EXPECT_EQ(r->body_as_JobRequest()->job_id(), 42u);
}

TEST(Encode, TaskRequests) {
  auto started = ipc::encodeTaskRequest(42, 3, 1234, 987654321, ipc::TaskEventKind::kStarted, 0);
  const auto* t = verified(started)->body_as_TaskRequest();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->job_id(), 42u);
  EXPECT_EQ(t->step_id(), 3u);
  EXPECT_EQ(t->pid(), 1234);
  EXPECT_EQ(t->start_ticks(), 987654321u);
  EXPECT_EQ(t->kind(), fb::TaskEventKind::Started);
  auto exited = ipc::encodeTaskRequest(42, 0xfffffffb, 1234, 0, ipc::TaskEventKind::kExited, 256);
  t = verified(exited)->body_as_TaskRequest();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->step_id(), 0xfffffffbu);  // the batch step keeps Slurm's id
  EXPECT_EQ(t->kind(), fb::TaskEventKind::Exited);
  EXPECT_EQ(t->exit_status(), 256);
}

TEST(Encode, StepRequests) {
  // The buffers must outlive the views read from them.
  const auto started = ipc::encodeStepRequest(42, 7, ipc::StepEventKind::kStarted, 0);
  const auto* s = verified(started)->body_as_StepRequest();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->step_id(), 7u);
  EXPECT_EQ(s->kind(), fb::StepEventKind::Started);
  const auto ended = ipc::encodeStepRequest(42, 7, ipc::StepEventKind::kEnded, 3);
  s = verified(ended)->body_as_StepRequest();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->kind(), fb::StepEventKind::Ended);
  EXPECT_EQ(s->exit_code(), 3);
}

TEST(DecodeReply, ReadyJobWithEnvironment) {
  auto r = decodeReply(
      jobReply(fb::JobState::Ready, {{"ACCEL_JOB_DIR", "/run/j/42"}, {"IPUOF_CONFIG_PATH", "/x"}}));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->outcome, Outcome::kOk);
  ASSERT_TRUE(r->job);
  EXPECT_FALSE(r->job->failed);
  EXPECT_EQ(r->job->state, "Ready");
  ASSERT_EQ(r->job->env.size(), 2u);
  EXPECT_EQ(r->job->env[0], (std::pair<std::string, std::string>{"ACCEL_JOB_DIR", "/run/j/42"}));
  EXPECT_EQ(r->job->env[1].first, "IPUOF_CONFIG_PATH");
}

TEST(DecodeReply, FailedJobCarriesTheReason) {
  auto r = decodeReply(jobReply(fb::JobState::Failed, {}, "needs 4 IPUs, this node has 2"));
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->job);
  EXPECT_TRUE(r->job->failed);
  EXPECT_EQ(r->job->state, "Failed");
  EXPECT_EQ(r->job->last_error, "needs 4 IPUs, this node has 2");
}

TEST(DecodeReply, EmptyVariableNamesAreDropped) {
  auto r = decodeReply(jobReply(fb::JobState::Ready, {{"", "x"}, {"A", ""}}));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->job->env.size(), 1u);
  EXPECT_EQ(r->job->env[0].first, "A");
}

TEST(DecodeReply, OutcomesWithoutBody) {
  const std::pair<fb::Outcome, Outcome> cases[] = {
      {fb::Outcome::NotFound, Outcome::kNotFound},
      {fb::Outcome::PermissionDenied, Outcome::kPermissionDenied},
      {fb::Outcome::BadRequest, Outcome::kBadRequest},
      {fb::Outcome::UserError, Outcome::kUserError},
      {fb::Outcome::NodeFault, Outcome::kNodeFault},
      {fb::Outcome::Busy, Outcome::kBusy},
      {static_cast<fb::Outcome>(200), Outcome::kUnknown},
  };
  for (const auto& [wire, mine] : cases) {
    auto r = decodeReply(bareReply(wire, "why"));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcome, mine) << outcomeName(mine);
    EXPECT_EQ(r->message, "why");
    EXPECT_FALSE(r->job);
  }
}

TEST(DecodeReply, GarbageAndTruncationAreRefused) {
  auto good = jobReply(fb::JobState::Ready, {{"ACCEL_JOB_DIR", "/run/j/42"}});
  std::vector<std::vector<std::uint8_t>> bad = {
      {},
      {0x00},
      {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
      std::vector<std::uint8_t>(good.begin(), good.begin() + static_cast<long>(good.size() / 2)),
      std::vector<std::uint8_t>(64, 0xab),
  };
  for (const auto& b : bad) {
    auto r = decodeReply(b);
    ASSERT_FALSE(r.ok()) << b.size();
    EXPECT_EQ(r.error().code(), ErrorCode::kParse);
  }
}

TEST(OutcomeName, Stable) {
  EXPECT_STREQ(outcomeName(Outcome::kOk), "Ok");
  EXPECT_STREQ(outcomeName(Outcome::kNotFound), "NotFound");
  EXPECT_STREQ(outcomeName(Outcome::kUnknown), "Unknown");
}

}  // namespace
}  // namespace accel::spank
