#pragma once
// The agent's event spool: every event is appended here before it is sent and
// stays until the aggregator acknowledges it. Segment files NNN.seg in one
// directory hold records (spool_format.h); a segment is deleted once all of
// its records are acknowledged.
//
// Threads: append() may be called from any thread; sync() belongs to one
// thread (the outbox's syncer), next() and acknowledge() to one thread (the
// outbox's sender), which may be another.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accel/common/result.h"
#include "accel/events/spool_format.h"

namespace accel::event {

inline constexpr uint64_t kDefaultSpoolMaxBytes = 256ull << 20;

struct SpoolOptions {
  std::string dir;  // created (mode 0700) if missing; its parent must exist
  uint64_t max_bytes = kDefaultSpoolMaxBytes;
  // Size at which a new segment is started; 0: max_bytes / 16, within
  // [64 KiB, 16 MiB].
  uint64_t segment_bytes = 0;
};

// A position in the spool: segment id and byte offset within it.
struct SpoolPos {
  uint64_t segment = 0;
  uint64_t offset = 0;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 takes the defaulted <=> for a 0 literal
  auto operator<=>(const SpoolPos&) const = default;
};

struct SpoolRecord {
  RecordMeta meta;
  std::vector<uint8_t> payload;
};

// What open() found. Records after a corrupt or torn one are dropped (the
// segment is truncated there and later segments removed) so that the rest
// of the stream has no gap in its sequence numbers.
struct RecoveryReport {
  uint64_t records = 0;
  uint64_t dropped_bytes = 0;
  uint64_t segments_removed = 0;
  uint64_t max_epoch = 0;
};

enum class Appended { kStored, kFull };

class Spool {
 public:
  // Opens or creates the spool in options.dir and recovers what is there.
  static Result<std::unique_ptr<Spool>> open(const SpoolOptions& options);
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  const RecoveryReport& recovery() const { return recovery_; }

  // Appends one record (written to the file, not yet fsynced). kFull when it
  // does not fit: telemetry may use only 7/8 of max_bytes, so the last eighth
  // stays for lifecycle events. Errors: kIo.
  Result<Appended> append(const RecordMeta& meta, std::span<const uint8_t> payload);

  // fdatasync of everything appended so far (and of the directory when a
  // segment was started since: a record is not durable while its file's name
  // is not); afterwards next() can return it.
  Status sync();

  // The record at `pos` if it is synced, advancing `pos` past it; nullopt when
  // nothing synced lies beyond. A `pos` before head() is moved to head().
  Result<std::optional<SpoolRecord>> next(SpoolPos& pos);

  // The first record not yet acknowledged.
  SpoolPos head() const;

  // Every record of `epoch` with a sequence number <= `seq` is acknowledged.
  // Leading acknowledged records are released (the count is returned);
  // segments they empty are deleted.
  Result<uint64_t> acknowledge(uint64_t epoch, uint64_t seq);

  uint64_t usedBytes() const;
  uint64_t backlog() const;  // records stored and not yet released
  uint64_t maxBytes() const { return max_bytes_; }

 private:
  struct Segment {
    uint64_t id = 0;
    int fd = -1;
    uint64_t size = 0;
    uint64_t synced = 0;
    bool named = true;  // false: created since the last sync of the directory
  };
  Spool(std::string dir, uint64_t max_bytes, uint64_t segment_bytes);
  Status recover();
  Status startSegment(uint64_t id);
  Result<std::optional<RecordMeta>> headRecord(uint64_t* bytes);
  std::string segmentPath(uint64_t id) const;
  uint64_t usedLocked() const;

  const std::string dir_;
  const uint64_t max_bytes_;
  const uint64_t segment_bytes_;
  RecoveryReport recovery_;

  mutable std::mutex mu_;
  std::vector<Segment> segments_;  // ascending ids; never empty after open()
  SpoolPos head_;
  uint64_t backlog_ = 0;
  std::map<uint64_t, uint64_t> acked_;  // epoch -> highest acknowledged seq
};

// Reads the agent epoch stored in `dir`/epoch, raises it above both that and
// `at_least`, stores it durably and returns it. The first call gives 1.
Result<uint64_t> raiseEpoch(const std::string& dir, uint64_t at_least);

}  // namespace accel::event
