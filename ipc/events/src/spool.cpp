#include "accel/events/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>

#include "accel/common/safe_file.h"
#include "accel/common/space_reserve.h"
#include "accel/events/codec.h"

namespace accel::event {
namespace {

constexpr uint64_t kMinSegment = uint64_t{64} * 1024;
constexpr uint64_t kMaxSegment = 16ull << 20;

// Segment ids from file names "00000000000000000042.seg"; anything else is
// not ours and is left alone.
std::vector<uint64_t> listSegments(const std::string& dir) {
  std::vector<uint64_t> ids;
  DIR* d = opendir(dir.c_str());
  if (!d) return ids;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() != 24 || name.substr(20) != ".seg") continue;
    if (!std::all_of(name.begin(), name.begin() + 20, [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    ids.push_back(std::stoull(name.substr(0, 20)));
  }
  closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

Status preadAll(int fd, uint8_t* out, size_t n, uint64_t at) {
  while (n > 0) {
    ssize_t r = ::pread(fd, out, n, static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return sysError("spool read", errno);
    if (r == 0) return Error(ErrorCode::kIo, "spool read: unexpected end of segment");
    out += r, n -= static_cast<size_t>(r), at += static_cast<uint64_t>(r);
  }
  return okStatus();
}

// `out_of_space`: set when the write failed with ENOSPC or EDQUOT.
Status writeAll(int fd, std::span<const uint8_t> bytes, bool* out_of_space) {
  while (!bytes.empty()) {
    ssize_t w = ::write(fd, bytes.data(), bytes.size());
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      *out_of_space = errno == ENOSPC || errno == EDQUOT;
      return sysError("spool write", errno);
    }
    bytes = bytes.subspan(static_cast<size_t>(w));
  }
  return okStatus();
}

}  // namespace

Spool::Spool(std::string dir, uint64_t max_bytes, uint64_t segment_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes), segment_bytes_(segment_bytes) {}

Spool::~Spool() {
  for (auto& s : segments_) ::close(s.fd);
}

std::string Spool::segmentPath(uint64_t id) const {
  char name[32];
  std::snprintf(name, sizeof name, "%020" PRIu64 ".seg", id);
  return dir_ + "/" + name;
}

Result<std::unique_ptr<Spool>> Spool::open(const SpoolOptions& o) {
  if (o.max_bytes < 2 * kMinSegment)
    return Error(ErrorCode::kInvalidArgument, "spool size below 128 KiB");
  uint64_t seg =
      o.segment_bytes ? o.segment_bytes : std::clamp(o.max_bytes / 16, kMinSegment, kMaxSegment);
  seg = std::min(seg, kMaxSegment);
  std::unique_ptr<Spool> s(new Spool(o.dir, o.max_bytes, seg));
  struct stat st {};
  if (::lstat(o.dir.c_str(), &st) != 0) {
    ACCEL_TRY(makeDirectory(o.dir, 0700).context("spool directory"));
  } else if (!S_ISDIR(st.st_mode)) {
    return Error(ErrorCode::kConflict, "spool directory " + o.dir + " is not a directory");
  }
  ACCEL_TRY(s->recover().context("spool " + o.dir));
  return s;
}

// Scans every segment in order. The first damaged record ends the spool:
// its segment is truncated there and later segments are removed.
Status Spool::recover() {
  bool cut = false;
  for (uint64_t id : listSegments(dir_)) {
    std::string path = segmentPath(id);
    if (cut) {
      if (::unlink(path.c_str()) != 0) return sysError("remove " + path, errno);
      ++recovery_.segments_removed;
      continue;
    }
    auto bytes = readFileNoFollow(path, kMaxSegment + kMaxEnvelopeBytes + kRecordHeaderBytes);
    if (!bytes.ok()) return bytes.error();
    std::span<const uint8_t> view(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
    SegmentScan scan = scanSegment(view);
    if (scan.torn) {
      if (::truncate(path.c_str(), static_cast<off_t>(scan.valid_bytes)) != 0)
        return sysError("truncate " + path, errno);
      recovery_.dropped_bytes += bytes->size() - scan.valid_bytes;
      cut = true;
    }
    int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return sysError("open " + path, errno);
    segments_.push_back({id, fd, scan.valid_bytes, scan.valid_bytes});
    for (const auto& m : scan.records) recovery_.max_epoch = std::max(recovery_.max_epoch, m.epoch);
    recovery_.records += scan.records.size();
  }
  backlog_ = recovery_.records;
  if (segments_.empty()) return startSegment(1);
  head_ = {segments_.front().id, 0};
  return okStatus();
}

Status Spool::startSegment(uint64_t id) {
  std::string path = segmentPath(id);
  int fd =
      ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return sysError("create " + path, errno);
  segments_.push_back({id, fd, 0, 0, false});
  if (segments_.size() == 1) head_ = {id, 0};
  return okStatus();
}

uint64_t Spool::usedLocked() const {
  uint64_t total = 0;
  for (const auto& s : segments_) total += s.size;
  return total - head_.offset;
}

Result<Appended> Spool::append(const RecordMeta& meta, std::span<const uint8_t> payload) {
  std::vector<uint8_t> rec = encodeRecord(meta, payload);
  std::lock_guard lock(mu_);
  uint64_t limit = meta.priority == Priority::kTelemetry ? max_bytes_ / 8 * 7 : max_bytes_;
  if (usedLocked() + rec.size() > limit) return Appended::kFull;
  if (segments_.back().size > 0 && segments_.back().size + rec.size() > segment_bytes_)
    ACCEL_TRY(startSegment(segments_.back().id + 1));
  Segment& s = segments_.back();
  bool out_of_space = false;
  Status w = writeAll(s.fd, rec, &out_of_space);
  for (int attempt = 0; !w.ok(); ++attempt) {
    // A partial write would corrupt every later record: cut it off again.
    if (::ftruncate(s.fd, static_cast<off_t>(s.size)) != 0)
      ACCEL_CHECK(!"spool segment cannot be repaired");
    // Out of space where a reserve is held (space_reserve.h): it is given up
    // for this record, which is written once more.
    if (attempt > 0 || !out_of_space || !space::release(dir_)) return w.error();
    w = writeAll(s.fd, rec, &out_of_space);
  }
  s.size += rec.size();
  ++backlog_;
  return Appended::kStored;
}

// The fds stay valid without the lock: a segment is closed only once all of
// it is acknowledged, so never while it has unsynced bytes.
Status Spool::sync() {
  std::vector<std::pair<int, uint64_t>> todo;  // fd, size to mark synced
  std::vector<uint64_t> unnamed;               // segments whose name is not yet durable
  {
    std::lock_guard lock(mu_);
    for (const auto& s : segments_) {
      if (s.synced < s.size) todo.emplace_back(s.fd, s.size);
      if (!s.named) unnamed.push_back(s.id);
    }
  }
  for (auto [fd, size] : todo)
    if (::fdatasync(fd) != 0) return sysError("spool fdatasync", errno);
  if (!unnamed.empty()) {
    int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return sysError("open " + dir_, errno);
    int rc = ::fsync(dir);
    int err = errno;
    ::close(dir);
    if (rc != 0) return sysError("spool directory fsync", err);
  }
  std::lock_guard lock(mu_);
  for (auto& s : segments_) {
    for (auto [fd, size] : todo)
      if (s.fd == fd) s.synced = std::max(s.synced, size);
    if (std::find(unnamed.begin(), unnamed.end(), s.id) != unnamed.end()) s.named = true;
  }
  return okStatus();
}

Result<std::optional<SpoolRecord>> Spool::next(SpoolPos& pos) {
  int fd = -1;
  {
    std::lock_guard lock(mu_);
    if (pos < head_) pos = head_;
    for (size_t i = 0; i < segments_.size(); ++i) {
      const Segment& s = segments_[i];
      if (s.id < pos.segment) continue;
      if (s.id > pos.segment) pos = {s.id, 0};
      if (pos.offset < s.synced) {
        fd = s.fd;
        break;
      }
      bool sealed = i + 1 < segments_.size() && s.synced == s.size;
      if (!sealed) return std::optional<SpoolRecord>();
    }
    if (fd < 0) return std::optional<SpoolRecord>();
  }
  uint8_t h[kRecordHeaderBytes];
  ACCEL_TRY(preadAll(fd, h, sizeof h, pos.offset));
  ParsedRecord r = parseRecordHeader({h, sizeof h});
  if (r.status != ParseStatus::kOk)
    return Error(ErrorCode::kIo, "spool record damaged after recovery");
  SpoolRecord out{r.meta, std::vector<uint8_t>(r.payload_bytes)};
  ACCEL_TRY(preadAll(fd, out.payload.data(), r.payload_bytes, pos.offset + kRecordHeaderBytes));
  pos.offset += kRecordHeaderBytes + r.payload_bytes;
  return std::optional<SpoolRecord>(std::move(out));
}

SpoolPos Spool::head() const {
  std::lock_guard lock(mu_);
  return head_;
}

// The header at head_ if a synced record is there; moves head_ over the
// end of a finished segment (deleting the segment) on the way.
Result<std::optional<RecordMeta>> Spool::headRecord(uint64_t* bytes) {
  std::lock_guard lock(mu_);
  while (true) {
    Segment& s = segments_.front();
    if (head_.offset < s.synced) {
      uint8_t h[kRecordHeaderBytes];
      ACCEL_TRY(preadAll(s.fd, h, sizeof h, head_.offset));
      ParsedRecord r = parseRecordHeader({h, sizeof h});
      if (r.status != ParseStatus::kOk)
        return Error(ErrorCode::kIo, "spool record damaged after recovery");
      *bytes = kRecordHeaderBytes + r.payload_bytes;
      return std::optional<RecordMeta>(r.meta);
    }
    if (segments_.size() == 1 || head_.offset < s.size) return std::optional<RecordMeta>();
    std::string path = segmentPath(s.id);
    if (::unlink(path.c_str()) != 0) return sysError("remove " + path, errno);
    ::close(s.fd);
    segments_.erase(segments_.begin());
    head_ = {segments_.front().id, 0};
  }
}

Result<uint64_t> Spool::acknowledge(uint64_t epoch, uint64_t seq) {
  uint64_t released = 0;
  uint64_t& acked = acked_[epoch];
  acked = std::max(acked, seq);
  while (true) {
    uint64_t bytes = 0;
    auto meta = headRecord(&bytes);
    if (!meta.ok()) return meta.error();
    if (!*meta) break;
    auto it = acked_.find((*meta)->epoch);
    if (it == acked_.end() || (*meta)->seq > it->second) break;
    std::lock_guard lock(mu_);
    head_.offset += bytes;
    --backlog_;
    ++released;
  }
  // Epochs older than the head's can get no more acknowledgements that matter.
  uint64_t bytes = 0;
  auto meta = headRecord(&bytes);
  if (meta.ok() && *meta)
    std::erase_if(acked_, [&](const auto& kv) { return kv.first < (*meta)->epoch; });
  return released;
}

uint64_t Spool::usedBytes() const {
  std::lock_guard lock(mu_);
  return usedLocked();
}

uint64_t Spool::backlog() const {
  std::lock_guard lock(mu_);
  return backlog_;
}

Result<uint64_t> raiseEpoch(const std::string& dir, uint64_t at_least) {
  std::string path = dir + "/epoch";
  uint64_t stored = 0;
  auto text = readFileNoFollow(path, 64);
  if (text.ok()) {
    char* end = nullptr;
    stored = std::strtoull(text->c_str(), &end, 10);
    if (end == text->c_str()) return Error(ErrorCode::kParse, path + ": not a number");
  } else if (text.error().code() != ErrorCode::kNotFound) {
    return text.error();
  }
  uint64_t epoch = std::max(stored, at_least) + 1;
  ACCEL_TRY(writeFileAtomic(path, std::to_string(epoch) + "\n", 0600));
  return epoch;
}

}  // namespace accel::event
