#pragma once
// Envelope encoding and the one way to read a received buffer: verify, then
// decode into values. Nothing else in the project reads events.fbs directly.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accel/common/result.h"
#include "accel/events/event.h"

namespace accel::event {

// Largest envelope accepted anywhere (spool and wire). Real events are a few
// hundred bytes; the cap bounds what a peer can make us allocate.
inline constexpr size_t kMaxEnvelopeBytes = size_t{64} * 1024;

struct Header {
  std::string node;
  uint64_t epoch = 0;
  uint64_t seq = 0;
  int64_t time_ns = 0;  // CLOCK_REALTIME
  int64_t mono_ns = 0;  // CLOCK_MONOTONIC
  bool operator==(const Header&) const = default;
};

struct Envelope {
  Header header;
  Priority priority = Priority::kLifecycle;
  // Empty when the sender used an event kind this build does not know
  // (a newer agent): the envelope is still valid and is stored and counted.
  std::optional<Event> event;
};

// Serializes one envelope; the priority is taken from the event.
std::vector<uint8_t> encode(const Header& header, const Event& event);

// Verifies `bytes` (size cap, FlatBuffers verifier with depth and table
// limits, file identifier "ACEV") before reading any field, then decodes.
// Errors: kParse with what was wrong. A missing node name is an error.
Result<Envelope> decode(std::span<const uint8_t> bytes);

// Reads only the header fields (still after full verification); cheaper for
// the aggregator's dedupe and the spool's bookkeeping.
Result<Header> decodeHeader(std::span<const uint8_t> bytes);

struct Ack {
  uint64_t epoch = 0;
  uint64_t seq = 0;
  bool operator==(const Ack&) const = default;
};
std::vector<uint8_t> encodeAck(const Ack& ack);
Result<Ack> decodeAck(std::span<const uint8_t> bytes);

// Only node, epoch and seq of an envelope, verifying those fields and not the
// event: how the aggregator names a frame it refuses (oversized, or with an
// event that does not verify) in its Nack. Errors: kParse.
Result<Header> peekHeader(std::span<const uint8_t> bytes);

// The aggregator's refusal of one frame (events.fbs, Nack).
enum class NackReason : uint8_t {
  kUnreadable,
  kOversized,
  kInvalid,
  kNodeMismatch,
  kNotOnJob,
  kKeyRevoked
};
const char* nackReasonName(NackReason reason);  // "unreadable", "oversized", ...

struct Nack {
  uint64_t epoch = 0;  // 0 with seq 0: the frame could not be read
  uint64_t seq = 0;
  NackReason reason = NackReason::kUnreadable;
  // The aggregator counted the sequence number as received: the next Ack
  // covers it and the sender must not send the frame again.
  bool skipped = false;
  std::string message;  // at most kMaxNackMessage bytes
  bool operator==(const Nack&) const = default;
};
inline constexpr size_t kMaxNackMessage = 256;
std::vector<uint8_t> encodeNack(const Nack& nack);  // cuts the message to kMaxNackMessage
Result<Nack> decodeNack(std::span<const uint8_t> bytes);

}  // namespace accel::event
