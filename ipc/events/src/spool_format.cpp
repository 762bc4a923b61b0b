#include "accel/events/spool_format.h"

#include <array>
#include <cstring>

#include "accel/events/codec.h"

namespace accel::event {
namespace {

constexpr uint32_t kMagic = 0x31505341;  // "ASP1" read as little-endian

constexpr std::array<uint32_t, 256> makeCrcTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // Castagnoli
    t[i] = c;
  }
  return t;
}
constexpr auto kCrcTable = makeCrcTable();

void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc) {
  crc = ~crc;
  for (uint8_t b : bytes) crc = kCrcTable[(crc ^ b) & 0xff] ^ (crc >> 8);
  return ~crc;
}

std::vector<uint8_t> encodeRecord(const RecordMeta& meta, std::span<const uint8_t> payload) {
  ACCEL_CHECK(payload.size() <= kMaxEnvelopeBytes);
  std::vector<uint8_t> out(kRecordHeaderBytes + payload.size(), 0);
  put32(&out[0], kMagic);
  put32(&out[4], static_cast<uint32_t>(payload.size()));
  put64(&out[8], meta.epoch);
  put64(&out[16], meta.seq);
  out[24] = static_cast<uint8_t>(meta.priority);
  if (!payload.empty()) std::memcpy(&out[kRecordHeaderBytes], payload.data(), payload.size());
  uint32_t crc = crc32c({out.data(), 28});
  crc = crc32c(payload, crc);
  put32(&out[28], crc);
  return out;
}

ParsedRecord parseRecordHeader(std::span<const uint8_t> h) {
  ParsedRecord r;
  if (h.size() < kRecordHeaderBytes) return r;  // kIncomplete
  r.status = ParseStatus::kCorrupt;
  if (get32(&h[0]) != kMagic || h[24] > 1 || h[25] || h[26] || h[27]) return r;
  uint32_t len = get32(&h[4]);
  if (len > kMaxEnvelopeBytes) return r;
  r.meta = {get64(&h[8]), get64(&h[16]), static_cast<Priority>(h[24])};
  r.payload_bytes = len;
  r.status = ParseStatus::kOk;
  return r;
}

ParsedRecord parseRecord(std::span<const uint8_t> bytes) {
  ParsedRecord r = parseRecordHeader(bytes);
  if (r.status != ParseStatus::kOk) return r;
  if (bytes.size() < kRecordHeaderBytes + r.payload_bytes) {
    r.status = ParseStatus::kIncomplete;
    return r;
  }
  uint32_t crc = crc32c(bytes.first(28));
  crc = crc32c(bytes.subspan(kRecordHeaderBytes, r.payload_bytes), crc);
  if (crc != get32(&bytes[28])) r.status = ParseStatus::kCorrupt;
  return r;
}

SegmentScan scanSegment(std::span<const uint8_t> bytes) {
  SegmentScan scan;
  size_t at = 0;
  while (at < bytes.size()) {
    ParsedRecord r = parseRecord(bytes.subspan(at));
    if (r.status != ParseStatus::kOk) break;
    scan.records.push_back(r.meta);
    at += kRecordHeaderBytes + r.payload_bytes;
  }
  scan.valid_bytes = at;
  scan.torn = at < bytes.size();
  return scan;
}

}  // namespace accel::event
