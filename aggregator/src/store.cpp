#include "accel/aggregator/store.h"

namespace accel::aggregator {
namespace {

// A prepared statement; finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) { rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); return *this; }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& blob(int i, const std::vector<uint8_t>& v) {
    sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(s_); }
  Status run() {
    int rc = step();
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return Error(ErrorCode::kIo, std::string("sqlite: ") + sqlite3_errmsg(db_));
    return okStatus();
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

Error sqlError(sqlite3* db, const std::string& what) {
  return Error(ErrorCode::kIo, what + ": " + sqlite3_errmsg(db));
}

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS events(
  node TEXT NOT NULL, epoch INTEGER NOT NULL, seq INTEGER NOT NULL,
  time_ns INTEGER NOT NULL, kind TEXT NOT NULL, job_id INTEGER NOT NULL,
  received_ns INTEGER NOT NULL, envelope BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS events_by_job ON events(job_id) WHERE job_id != 0;
CREATE TABLE IF NOT EXISTS streams(
  node TEXT NOT NULL, epoch INTEGER NOT NULL, acked_seq INTEGER NOT NULL,
  updated_ns INTEGER NOT NULL, PRIMARY KEY(node, epoch)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS jobs(
  job_id INTEGER PRIMARY KEY, state TEXT NOT NULL, updated_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pending_comments(
  job_id INTEGER PRIMARY KEY, generation INTEGER NOT NULL, attempts INTEGER NOT NULL,
  next_ns INTEGER NOT NULL, last_error TEXT NOT NULL DEFAULT '');
)";

}  // namespace

Result<std::unique_ptr<Store>> Store::open(const std::string& path, Mode mode) {
  sqlite3* db = nullptr;
  int flags = mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOFOLLOW, nullptr);
  std::unique_ptr<Store> store(new Store(db));
  if (rc != SQLITE_OK) return sqlError(db, "open " + path);
  sqlite3_busy_timeout(db, 5000);
  if (mode == Mode::kReadOnly) return store;
  // FULL: each commit is fsynced before it is acknowledged to an agent.
  // A larger checkpoint interval: fewer, longer copies of the WAL into the
  // database while ingest is busy.
  ACCEL_TRY(store->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=16384;"));
  ACCEL_TRY(store->createSchema());
  return store;
}

Store::~Store() { sqlite3_close_v2(db_); }

Status Store::exec(const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) == SQLITE_OK) return okStatus();
  std::string text = msg ? msg : "unknown";
  sqlite3_free(msg);
  return Error(ErrorCode::kIo, std::string("sqlite: ") + text);
}

Status Store::createSchema() { return exec(kSchema); }

Result<std::map<StreamKey, uint64_t>> Store::loadProgress() {
  Stmt s(db_, "SELECT node, epoch, acked_seq FROM streams");
  if (!s.ok()) return sqlError(db_, "load progress");
  std::map<StreamKey, uint64_t> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) out[{s.text(0), uint64_t(s.i64(1))}] = uint64_t(s.i64(2));
  if (rc != SQLITE_DONE) return sqlError(db_, "load progress");
  return out;
}

Result<std::optional<JobSummary>> Store::loadJob(uint32_t job_id) {
  Stmt s(db_, "SELECT state FROM jobs WHERE job_id = ?");
  if (!s.ok()) return sqlError(db_, "load job");
  s.bind(1, int64_t{job_id});
  int rc = s.step();
  if (rc == SQLITE_DONE) return std::optional<JobSummary>();
  if (rc != SQLITE_ROW) return sqlError(db_, "load job");
  auto summary = fromStateJson(s.text(0));
  if (!summary.ok()) return summary.error();
  return std::optional<JobSummary>(*summary);
}

Status Store::commit(const Batch& b) {
  ACCEL_TRY(exec("BEGIN IMMEDIATE"));
  auto fail = [&](const char* what) {
    Error e = sqlError(db_, what);
    (void)exec("ROLLBACK");
    return e;
  };
  Stmt ev(db_, "INSERT INTO events(node,epoch,seq,time_ns,kind,job_id,received_ns,envelope) VALUES(?,?,?,?,?,?,?,?)");
  Stmt st(db_, "INSERT INTO streams(node,epoch,acked_seq,updated_ns) VALUES(?,?,?,?) ON CONFLICT(node,epoch) "
               "DO UPDATE SET acked_seq=excluded.acked_seq, updated_ns=excluded.updated_ns");
  Stmt jb(db_, "INSERT OR REPLACE INTO jobs(job_id,state,updated_ns) VALUES(?,?,?)");
  Stmt pc(db_, "INSERT INTO pending_comments(job_id,generation,attempts,next_ns) VALUES(?,1,0,?) "
               "ON CONFLICT(job_id) DO UPDATE SET generation=generation+1, attempts=0, next_ns=excluded.next_ns");
  if (!ev.ok() || !st.ok() || !jb.ok() || !pc.ok()) return fail("prepare batch");
  for (const auto& e : b.events) {
    ev.bind(1, e.header.node).bind(2, int64_t(e.header.epoch)).bind(3, int64_t(e.header.seq));
    ev.bind(4, e.header.time_ns).bind(5, e.kind).bind(6, int64_t{e.job_id}).bind(7, e.received_ns);
    if (!ev.blob(8, e.envelope).run().ok()) return fail("insert event");
  }
  for (const auto& [key, seq] : b.progress)
    if (!st.bind(1, key.first).bind(2, int64_t(key.second)).bind(3, int64_t(seq)).bind(4, b.now_ns).run().ok())
      return fail("update stream");
  for (const auto& j : b.jobs)
    if (!jb.bind(1, int64_t{j.job_id}).bind(2, toStateJson(j)).bind(3, b.now_ns).run().ok()) return fail("save job");
  for (uint32_t job : b.comment_jobs)
    if (!pc.bind(1, int64_t{job}).bind(2, b.now_ns).run().ok()) return fail("queue comment");
  if (!exec("COMMIT").ok()) return fail("commit");
  return okStatus();
}

Result<std::vector<PendingComment>> Store::duePending(int64_t now_ns, int limit) {
  Stmt s(db_, "SELECT job_id, generation, attempts FROM pending_comments WHERE next_ns <= ? ORDER BY next_ns LIMIT ?");
  if (!s.ok()) return sqlError(db_, "pending comments");
  s.bind(1, now_ns).bind(2, int64_t{limit});
  std::vector<PendingComment> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW)
    out.push_back({uint32_t(s.i64(0)), uint64_t(s.i64(1)), uint32_t(s.i64(2))});
  if (rc != SQLITE_DONE) return sqlError(db_, "pending comments");
  return out;
}

Status Store::finishPending(uint32_t job_id, uint64_t generation) {
  Stmt s(db_, "DELETE FROM pending_comments WHERE job_id = ? AND generation = ?");
  if (!s.ok()) return sqlError(db_, "finish comment");
  return s.bind(1, int64_t{job_id}).bind(2, int64_t(generation)).run();
}

Status Store::deferPending(uint32_t job_id, uint64_t generation, int64_t next_ns, const std::string& error) {
  Stmt s(db_, "UPDATE pending_comments SET attempts = attempts + 1, next_ns = ?, last_error = ? "
              "WHERE job_id = ? AND generation = ?");
  if (!s.ok()) return sqlError(db_, "defer comment");
  return s.bind(1, next_ns).bind(2, error).bind(3, int64_t{job_id}).bind(4, int64_t(generation)).run();
}

Result<int64_t> Store::pendingCount() {
  Stmt s(db_, "SELECT count(*) FROM pending_comments");
  if (!s.ok() || s.step() != SQLITE_ROW) return sqlError(db_, "count comments");
  return s.i64(0);
}

Result<std::vector<StoredEvent>> Store::readEvents(const EventFilter& f) {
  Stmt s(db_, "SELECT rowid,node,epoch,seq,time_ns,kind,job_id,received_ns,envelope FROM events "
              "WHERE rowid > ?1 AND (?2 IS NULL OR job_id = ?2) AND (?3 IS NULL OR node = ?3) "
              "ORDER BY rowid LIMIT ?4");
  if (!s.ok()) return sqlError(db_, "read events");
  s.bind(1, f.after_row).bind(4, int64_t{f.limit});
  if (f.job_id) s.bind(2, int64_t{*f.job_id});
  if (f.node) s.bind(3, *f.node);
  std::vector<StoredEvent> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    StoredEvent e;
    e.row = s.i64(0);
    e.header = {s.text(1), uint64_t(s.i64(2)), uint64_t(s.i64(3)), s.i64(4), 0};
    e.kind = s.text(5);
    e.job_id = uint32_t(s.i64(6));
    e.received_ns = s.i64(7);
    e.envelope = s.bytes(8);
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) return sqlError(db_, "read events");
  return out;
}

}  // namespace accel::aggregator
