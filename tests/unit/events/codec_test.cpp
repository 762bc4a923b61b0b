// Envelope encoding and the verify-then-decode path: every kind round-trips,
// and truncated, garbage, oversized and foreign buffers are refused.
#include "accel/events/codec.h"

#include <gtest/gtest.h>

#include <random>

#include "accel/schemas/events_generated.h"

namespace accel::event {
namespace {

Header header(uint64_t seq = 7) { return {"node-a", 3, seq, 1'700'000'000'000'000'000, 42}; }

GpuProgress busyGpuProgress() {
  GpuDeviceFigures d{2, "0000:3b:00.0", "GPU-1", 7, 31.5F, 87, 40960, 12.5};
  return GpuProgress{42, 60, GpuFigures{7, {d}}};
}

std::vector<Event> everyKind() {
  return {PrologStarted{42, 1000, "alice", "n[1-2]", 2, 3},
          PrologFinished{42, JobResult::kOk, {"ipu0", "ipu1"}, "p42", 900, "", "ipu", 3600},
          EpilogFinished{42, JobResult::kTimeLimit, 300, "limit", false, 120, 3},
          AgentStarted{"0.1.0", 3},
          TaskStarted{42, 0, 1, 4242},
          TaskEnded{42, 0, 1, 9},
          StepStarted{42, 5, "wsjob-7-csx1", true},
          StepEnded{42, 5, 0},
          ApplianceJobChanged{42, "wsjob-7", ApplianceState::kRunning, 2, 60},
          TimeLimitWarning{42, 3600, 300},
          TimeLimitEnforced{42, 3600, 3601},
          NodeHeartbeat{8, 2, "gpu", 1, 17, 30},
          busyGpuProgress(),
          GpuXid{42, 79, "hardware", "0000:3b:00.0", 0, 0, "GPU has fallen off the bus.", true},
          JobIdle{42, 1800, {0, 3}, IdleAction::kCancel, true}};
}

// gpu_progress: a running job's figures so far; droppable (the next one
// carries everything), and of its job.
TEST(EventCodec, GpuProgressIsTelemetryOfItsJob) {
  const Event ev = GpuProgress{42, 0, GpuFigures{1, {GpuDeviceFigures{0}}}};
  EXPECT_EQ(kindName(ev), std::string("gpu_progress"));
  EXPECT_EQ(jobIdOf(ev), 42u);
  EXPECT_EQ(priorityOf(ev), Priority::kTelemetry);
}

// A limit the node could not measure: the flag added to PrologFinished.
TEST(EventCodec, AnUnmeasuredLimitRoundTrips) {
  const Event ev = PrologFinished{43, JobResult::kOk, {}, "", 900, "", "appliance", 60, true};
  auto back = decode(encode(header(), ev));
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_TRUE(back->event.has_value());
  EXPECT_EQ(*back->event, ev);
  EXPECT_TRUE(std::get<PrologFinished>(*back->event).limit_unmeasured);
}

// job_idle: its fields round-trip; an action a later agent adds reads as
// none, and the device list is bounded.
TEST(EventCodec, AJobIdleRoundTripsBounded) {
  const Event ev = JobIdle{42, 1800, {0, 3}, IdleAction::kCancelFailed, true};
  auto back = decode(encode(header(), ev));
  ASSERT_TRUE(back.ok() && back->event.has_value());
  EXPECT_EQ(*back->event, ev);
  EXPECT_EQ(kindName(ev), std::string("job_idle"));
  EXPECT_EQ(jobIdOf(ev), 42u);
  EXPECT_EQ(priorityOf(ev), Priority::kLifecycle);
  JobIdle later{42, 5, std::vector<uint32_t>(40, 1), static_cast<IdleAction>(9), false};
  back = decode(encode(header(), later));
  ASSERT_TRUE(back.ok() && back->event.has_value());
  const auto& read = std::get<JobIdle>(*back->event);
  EXPECT_EQ(read.action, IdleAction::kNone);
  EXPECT_EQ(read.devices.size(), JobIdle::kMaxDevices);
}

TEST(EventCodec, EveryKindRoundTrips) {
  auto kinds = everyKind();
  ASSERT_EQ(kinds.size(), std::variant_size_v<Event>);
  for (const auto& ev : kinds) {
    auto bytes = encode(header(), ev);
    auto back = decode(bytes);
    ASSERT_TRUE(back.ok()) << kindName(ev) << ": " << back.error().message();
    EXPECT_EQ(back->header, header());
    ASSERT_TRUE(back->event.has_value());
    EXPECT_EQ(*back->event, ev) << kindName(ev);
    EXPECT_EQ(back->priority, priorityOf(ev));
  }
}

TEST(EventCodec, OnlyHeartbeatsAndGpuProgressAreTelemetry) {
  for (const auto& ev : everyKind())
    EXPECT_EQ(priorityOf(ev) == Priority::kTelemetry,
              std::holds_alternative<NodeHeartbeat>(ev) || std::holds_alternative<GpuProgress>(ev))
        << kindName(ev);
}

TEST(EventCodec, HeaderAloneMatchesFullDecode) {
  auto bytes = encode(header(99), TaskStarted{1, 2, 3, 4});
  auto h = decodeHeader(bytes);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(*h, header(99));
}

// The builder may end a buffer with alignment padding that nothing refers
// to; cutting only padding is harmless. Cutting anything that is read is not.
TEST(EventCodec, TruncationIsRefusedUnlessOnlyPaddingIsCut) {
  const Event ev = PrologFinished{42, JobResult::kOk, {"a", "b"}, "p", 1, "m", "gpu", 0};
  auto bytes = encode(header(), ev);
  int refused = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = decode(std::span(bytes.data(), n));
    if (!r.ok()) {
      ++refused;
      continue;
    }
    EXPECT_GE(n + 8, bytes.size()) << "accepted a prefix of " << n << " bytes";
    EXPECT_EQ(r->header, header());
    EXPECT_EQ(r->event, std::optional<Event>(ev));
  }
  EXPECT_GE(refused, int(bytes.size()) - 7);
}

TEST(EventCodec, GarbageIsRefused) {
  std::mt19937 rng(1234);
  int accepted = 0;
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> g(rng() % 300);
    for (auto& b : g) b = static_cast<uint8_t>(rng());
    if (decode(g).ok()) ++accepted;
  }
  EXPECT_EQ(accepted, 0);
}

TEST(EventCodec, OversizedBufferIsRefusedBeforeReading) {
  std::vector<uint8_t> big(kMaxEnvelopeBytes + 1, 0);
  auto r = decode(big);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("over the limit"), std::string::npos);
}

TEST(EventCodec, EnvelopeWithoutNodeOrSeqIsRefused) {
  EXPECT_FALSE(decode(encode({"", 1, 1, 0, 0}, AgentStarted{})).ok());
  EXPECT_FALSE(decode(encode({"n", 1, 0, 0, 0}, AgentStarted{})).ok());
}

TEST(EventCodec, AckIsNotAnEnvelopeAndBack) {
  auto ack = encodeAck({5, 77});
  EXPECT_FALSE(decode(ack).ok());
  auto back = decodeAck(ack);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, (Ack{5, 77}));
  EXPECT_FALSE(decodeAck(encode(header(), AgentStarted{})).ok());
  EXPECT_FALSE(decodeAck(std::span(ack.data(), ack.size() - 1)).ok());
}

// Found by fuzz_event_ingest: a union tag without its table passes the
// FlatBuffers verifier; it must decode as an unknown event, not crash.
TEST(EventCodec, UnionTagWithoutTableIsAnUnknownEvent) {
  flatbuffers::FlatBufferBuilder b;
  auto node = b.CreateString("n1");
  events::EnvelopeBuilder eb(b);
  eb.add_node(node);
  eb.add_seq(1);
  eb.add_event_type(events::Event::PrologStarted);
  b.Finish(eb.Finish(), events::EnvelopeIdentifier());
  auto r = decode({b.GetBufferPointer(), b.GetSize()});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->event.has_value());
}

TEST(EventCodec, JobIdOfNodeWideEventsIsZero) {
  EXPECT_EQ(jobIdOf(AgentStarted{}), 0u);
  EXPECT_EQ(jobIdOf(NodeHeartbeat{}), 0u);
  EXPECT_EQ(jobIdOf(StepEnded{9, 1, 0}), 9u);
}

}  // namespace
}  // namespace accel::event
