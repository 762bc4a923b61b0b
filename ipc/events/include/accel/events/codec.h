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
inline constexpr size_t kMaxEnvelopeBytes = 64 * 1024;

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

}  // namespace accel::event
