// The recovery reader on literal bytes: good records, torn tails, garbage.
#include "accel/events/spool_format.h"

#include <gtest/gtest.h>

#include <random>

namespace accel::event {
namespace {

std::vector<uint8_t> records(int n, uint64_t epoch = 1) {
  std::vector<uint8_t> out;
  for (int i = 1; i <= n; ++i) {
    std::vector<uint8_t> payload(static_cast<size_t>(10 + i), static_cast<uint8_t>(i));
    auto r = encodeRecord({epoch, uint64_t(i), Priority::kLifecycle}, payload);
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

TEST(SpoolFormat, CrcIsCastagnoli) {
  const std::string text = "123456789";
  EXPECT_EQ(crc32c({reinterpret_cast<const uint8_t*>(text.data()), text.size()}), 0xE3069283u);
}

TEST(SpoolFormat, ScanReadsEveryRecord) {
  auto bytes = records(5, 9);
  SegmentScan s = scanSegment(bytes);
  EXPECT_FALSE(s.torn);
  EXPECT_EQ(s.valid_bytes, bytes.size());
  ASSERT_EQ(s.records.size(), 5u);
  EXPECT_EQ(s.records[4], (RecordMeta{9, 5, Priority::kLifecycle}));
}

TEST(SpoolFormat, TornTailKeepsWholeRecordsOnly) {
  auto bytes = records(3);
  size_t two = scanSegment(std::span(bytes.data(), bytes.size())).valid_bytes;
  for (size_t cut = 1; cut < 40; ++cut) {
    SegmentScan s = scanSegment(std::span(bytes.data(), two - cut));
    EXPECT_TRUE(s.torn);
    EXPECT_EQ(s.records.size(), 2u) << "cut " << cut;
  }
}

TEST(SpoolFormat, FlippedPayloadByteStopsTheScanThere) {
  auto bytes = records(4);
  auto first = encodeRecord({1, 1, Priority::kLifecycle}, std::vector<uint8_t>(11, 1));
  bytes[first.size() + kRecordHeaderBytes + 3] ^= 0x40;  // inside record 2's payload
  SegmentScan s = scanSegment(bytes);
  EXPECT_TRUE(s.torn);
  EXPECT_EQ(s.records.size(), 1u);
  EXPECT_EQ(s.valid_bytes, first.size());
}

TEST(SpoolFormat, GarbageNeverYieldsRecords) {
  std::mt19937 rng(99);
  for (int i = 0; i < 1000; ++i) {
    std::vector<uint8_t> g(rng() % 200);
    for (auto& b : g) b = static_cast<uint8_t>(rng());
    SegmentScan s = scanSegment(g);
    EXPECT_TRUE(s.records.empty());
    EXPECT_EQ(s.valid_bytes, 0u);
  }
}

TEST(SpoolFormat, HugeLengthIsCorruptNotIncomplete) {
  auto r = encodeRecord({1, 1, Priority::kLifecycle}, std::vector<uint8_t>(4, 0));
  r[7] = 0x7f;  // length high byte: far over the envelope limit
  EXPECT_EQ(parseRecord(r).status, ParseStatus::kCorrupt);
}

}  // namespace
}  // namespace accel::event
