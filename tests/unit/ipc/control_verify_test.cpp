#include "accel/ipc/control_verify.h"

#include <gtest/gtest.h>

#include <vector>

#include "accel/ipc/control_requests.h"

namespace accel::ipc {
namespace {

namespace fb = accel::control;

std::vector<uint8_t> finished(flatbuffers::FlatBufferBuilder& fbb) {
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

TEST(ControlVerifyTest, AWellFormedRequestIsReadAsItWasBuilt) {
  auto bytes = encodeJobRequest(42);
  auto req = verifyRequest(bytes);
  ASSERT_TRUE(req.ok()) << req.error().message();
  ASSERT_EQ((*req)->body_type(), fb::RequestBody::JobRequest);
  EXPECT_EQ((*req)->body_as_JobRequest()->job_id(), 42u);
}

TEST(ControlVerifyTest, RequestsThatAreNotVersionOneWithABodyAreRefusedSayingWhy) {
  EXPECT_EQ(verifyRequest({}).error().message(), "request failed verification");
  std::vector<uint8_t> garbage(64, 0xA5);
  EXPECT_EQ(verifyRequest(garbage).error().message(), "request failed verification");
  flatbuffers::FlatBufferBuilder v2;
  v2.Finish(
      fb::CreateRequest(v2, 2, fb::RequestBody::StatusRequest, fb::CreateStatusRequest(v2).Union()),
      fb::RequestIdentifier());
  auto r = verifyRequest(finished(v2));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message(), "unsupported request version 2");

  // The union's type is set, its table left out: the verifier lets it pass.
  flatbuffers::FlatBufferBuilder bodiless;
  bodiless.Finish(fb::CreateRequest(bodiless, 1, fb::RequestBody::JobRequest, 0),
                  fb::RequestIdentifier());
  r = verifyRequest(finished(bodiless));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "request has no body");

  // A truncated request is refused, never read.
  auto whole = encodeStatusRequest();
  whole.resize(whole.size() / 2);
  EXPECT_FALSE(verifyRequest(whole).ok());
}

TEST(ControlVerifyTest, RepliesAreVerifiedBeforeAnyFieldIsRead) {
  flatbuffers::FlatBufferBuilder fbb;
  auto message = fbb.CreateString("no such job");
  fbb.Finish(fb::CreateReply(fbb, fb::Outcome::NotFound, message));
  auto bytes = finished(fbb);
  auto r = verifyReply(bytes);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ((*r)->outcome(), fb::Outcome::NotFound);
  EXPECT_EQ((*r)->message()->str(), "no such job");

  EXPECT_EQ(verifyReply({}).error().code(), ErrorCode::kParse);
  bytes.resize(bytes.size() - 6);
  EXPECT_EQ(verifyReply(bytes).error().code(), ErrorCode::kParse);
  std::vector<uint8_t> garbage(64, 0xFF);
  EXPECT_FALSE(verifyReply(garbage).ok());
}

}  // namespace
}  // namespace accel::ipc
