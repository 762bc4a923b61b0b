#pragma once
// The spool's on-disk record format, as pure functions of bytes so that the
// recovery reader can be tested and fuzzed without files.
//
// A segment file is a sequence of records, each a 32-byte header and a payload
// (one encoded envelope). Header, little-endian:
//   0  u32 magic "ASP1"     4  u32 payload length   8  u64 epoch
//   16 u64 seq              24 u8 priority, 3 zero bytes
//   28 u32 CRC-32C of header bytes 0..27 followed by the payload
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "accel/events/event.h"

namespace accel::event {

inline constexpr size_t kRecordHeaderBytes = 32;

struct RecordMeta {
  uint64_t epoch = 0;
  uint64_t seq = 0;
  Priority priority = Priority::kLifecycle;
  bool operator==(const RecordMeta&) const = default;
};

uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc = 0);

// Header followed by payload; payload must be at most kMaxEnvelopeBytes.
std::vector<uint8_t> encodeRecord(const RecordMeta& meta, std::span<const uint8_t> payload);

enum class ParseStatus { kOk, kIncomplete, kCorrupt };
struct ParsedRecord {
  ParseStatus status = ParseStatus::kIncomplete;
  RecordMeta meta;
  size_t payload_bytes = 0;  // kOk: the record spans header + payload_bytes
};

// Reads the record at the start of `bytes`. kIncomplete: fewer bytes than the
// record claims (a torn tail); kCorrupt: bad magic, length, priority or CRC.
ParsedRecord parseRecord(std::span<const uint8_t> bytes);

// Reads only the header's fields (for a caller that checks the CRC itself or
// already trusts the record); kCorrupt on a bad magic or length.
ParsedRecord parseRecordHeader(std::span<const uint8_t> header);

struct SegmentScan {
  std::vector<RecordMeta> records;
  size_t valid_bytes = 0;  // the good prefix; everything after it is dropped
  bool torn = false;       // valid_bytes < the input's size
};

// The recovery reader: all records from the start of a segment up to the
// first incomplete or corrupt one. Never fails; any input is fine.
SegmentScan scanSegment(std::span<const uint8_t> bytes);

}  // namespace accel::event
