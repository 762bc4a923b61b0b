#pragma once
// What the store's source files share (not part of the interface): the
// prepared statement wrapper, SQLite errors as values, and how each job's
// event rows are grouped into ranges (job_ranges).
#include <sqlite3.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "accel/common/result.h"

namespace accel::aggregator::store_sql {

// A prepared statement; finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr);
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // Without a copy: `v` must stay unchanged until run() or done().
  Stmt& view(int i, std::string_view v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    return *this;
  }
  Stmt& blob(int i, std::span<const uint8_t> v) {
    sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(s_); }
  // Every caller binds all of a statement's parameters before each run, so
  // the bindings are left in place (clearing them cost a few percent of a
  // commit); a value bound without a copy is not read again until rebound.
  Status run() {
    int rc = step();
    sqlite3_reset(s_);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
      return Error(ErrorCode::kIo, std::string("sqlite: ") + sqlite3_errmsg(db_));
    return okStatus();
  }
  // Makes a cached statement ready for its next use after step().
  void done() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  int64_t i64(int c) { return sqlite3_column_int64(s_, c); }
  std::string text(int c) {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(s_, c))) : std::string();
  }
  std::vector<uint8_t> bytes(int c) {
    auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(s_, c));
    return p ? std::vector<uint8_t>(p, p + sqlite3_column_bytes(s_, c)) : std::vector<uint8_t>();
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  int rc_;
};

inline Error sqlError(sqlite3* db, const std::string& what) {
  return Error(ErrorCode::kIo, what + ": " + sqlite3_errmsg(db));
}

// A job's rows are kept as ranges [first_row, last_row] in job_ranges. A
// range is closed when the job's next row lies more than kRangeGap rows
// past its last one, so reading a job through its ranges examines at most
// kRangeGap rows of other jobs for each row of its own: the index by job
// costs one row per job per commit (and per gap), not one per event.
constexpr int64_t kRangeGap = 64;

struct JobRange {
  uint32_t job_id = 0;
  int64_t first_row = 0, last_row = 0;
};

// Builds the ranges of rows handed in increasing order.
class RangeBuilder {
 public:
  void add(uint32_t job, int64_t row) {
    auto [it, fresh] = open_.try_emplace(job, JobRange{job, row, row});
    if (fresh) return;
    if (row - it->second.last_row > kRangeGap) {
      closed_.push_back(it->second);
      it->second.first_row = row;
    }
    it->second.last_row = row;
  }
  // Every range, closed or still open; the builder starts afresh.
  std::vector<JobRange> take() {
    for (const auto& [job, r] : open_) closed_.push_back(r);
    open_.clear();
    std::vector<JobRange> out;
    out.swap(closed_);
    return out;
  }
  bool empty() const { return open_.empty() && closed_.empty(); }

 private:
  std::unordered_map<uint32_t, JobRange> open_;
  std::vector<JobRange> closed_;
};

}  // namespace accel::aggregator::store_sql
