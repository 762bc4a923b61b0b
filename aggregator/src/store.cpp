#include "accel/aggregator/store.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "store_sql.h"

namespace accel::aggregator {
namespace {

using store_sql::sqlError;
using store_sql::Stmt;

constexpr const char* kLoadJob = "SELECT state FROM jobs WHERE job_id = ?";

// One job's stored summary through `s` (kLoadJob); leaves `s` ready for reuse.
Result<std::optional<JobSummary>> readJob(sqlite3* db, Stmt& s, uint32_t job_id) {
  s.bind(1, int64_t{job_id});
  int rc = s.step();
  if (rc != SQLITE_ROW) {
    Error e = sqlError(db, "load job");  // the message, before reset clears it
    s.done();
    if (rc == SQLITE_DONE) return std::optional<JobSummary>();
    return e;
  }
  auto summary = fromStateJson(s.text(0));
  s.done();
  if (!summary.ok()) return summary.error();
  return std::optional<JobSummary>(std::move(*summary));
}

}  // namespace

constexpr const char* kInsertEvents =
    "INSERT INTO events(node,epoch,seq,time_ns,kind,job_id,received_ns,envelope) VALUES";
constexpr const char* kEventRow = "(?,?,?,?,?,?,?,?)";
constexpr int kEventColumns = 8;
// Events are inserted this many to a statement: one step, and one pass of
// SQLite's statement setup, for the lot.
constexpr size_t kEventsPerInsert = 128;

std::string insertEvents(size_t rows) {
  std::string sql = kInsertEvents;
  for (size_t i = 0; i < rows; ++i) sql += (i ? "," : "") + std::string(kEventRow);
  return sql;
}

// The statements of the ingest path, prepared once per connection.
struct Store::Prepared {
  explicit Prepared(sqlite3* db)
      : event(db, insertEvents(1).c_str()),
        events(db, insertEvents(kEventsPerInsert).c_str()),
        stream(db,
               "INSERT INTO streams(node,epoch,acked_seq,updated_ns) VALUES(?,?,?,?) ON "
               "CONFLICT(node,epoch) "
               "DO UPDATE SET acked_seq=excluded.acked_seq, updated_ns=excluded.updated_ns"),
        job(db, "INSERT OR REPLACE INTO jobs(job_id,state,updated_ns) VALUES(?,?,?)"),
        comment(db,
                "INSERT INTO pending_comments(job_id,generation,attempts,next_ns) VALUES(?,1,0,?) "
                "ON CONFLICT(job_id) DO UPDATE SET generation=generation+1, attempts=0, "
                "next_ns=excluded.next_ns"),
        span(db,
             "INSERT INTO job_spans(job_id, first_row, last_row) VALUES(?,?,?) ON CONFLICT(job_id) "
             "DO UPDATE SET last_row = max(last_row, excluded.last_row)"),
        range(db, "INSERT OR REPLACE INTO job_ranges(job_id, first_row, last_row) VALUES(?,?,?)"),
        wait(db,
             "INSERT INTO summary_waits(job_id, due_ns) VALUES(?,?) ON CONFLICT(job_id) "
             "DO UPDATE SET due_ns = excluded.due_ns"),
        unwait(db, "DELETE FROM summary_waits WHERE job_id = ?"),
        hold(db, "INSERT OR IGNORE INTO held_jobs(job_id) VALUES(?)"),
        release(db, "DELETE FROM held_jobs WHERE job_id = ?"),
        seen(db,
             "INSERT INTO nodes(node, last_event_ns) VALUES(?,?) ON CONFLICT(node) "
             "DO UPDATE SET last_event_ns = max(last_event_ns, excluded.last_event_ns)"),
        beat(db,
             "UPDATE nodes SET heartbeat_ns = ?, interval_s = ?, accelerators = ?, busy = ?, "
             "accel_kind = ?, "
             "jobs = ?, backlog = ? WHERE node = ?"),
        begin(db, "BEGIN IMMEDIATE"),
        commit(db, "COMMIT"),
        rollback(db, "ROLLBACK") {}
  bool ok() const {
    return event.ok() && events.ok() && stream.ok() && job.ok() && comment.ok() && span.ok() &&
           range.ok() && wait.ok() && unwait.ok() && hold.ok() && release.ok() && seen.ok() &&
           beat.ok() && begin.ok() && commit.ok() && rollback.ok();
  }
  Stmt event, events, stream, job, comment, span, range, wait, unwait, hold, release, seen, beat,
      begin, commit, rollback;
  std::unordered_map<uint32_t, std::pair<int64_t, int64_t>> spans;  // per commit: job -> rows
  store_sql::RangeBuilder ranges;                                   // per commit
};

// loadJob's connection (read-write stores only).
struct Store::Reader {
  explicit Reader(sqlite3* d) : db(d) {}
  ~Reader() {
    load_job.reset();  // the statement before its connection
    sqlite3_close_v2(db);
  }
  std::mutex mu;
  sqlite3* db;
  std::unique_ptr<Stmt> load_job;
};

Result<std::unique_ptr<Store>> Store::open(const std::string& path, Mode mode, Sync sync) {
  // SQLite's count of its own memory takes a global lock around every
  // allocation; nothing here reads the count. This must come before SQLite
  // is first used in the process; later it is refused, harmlessly.
  static std::once_flag quiet;
  std::call_once(quiet, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  sqlite3* db = nullptr;
  int flags =
      mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  // NOMUTEX: SQLite takes no lock of its own around each call (it took ten
  // per stored event); the Store's mutex guards the connection instead, and
  // the ingest thread reads summaries through a connection of its own.
  int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  std::unique_ptr<Store> store(new Store(db));
  if (rc != SQLITE_OK) return sqlError(db, "open " + path);
  sqlite3_busy_timeout(db, 5000);
  if (mode == Mode::kReadOnly) return store;
  // 16 KiB pages (new databases only; an existing one keeps its size): the
  // event rows, appended in order, fill a quarter as many pages, with less
  // page bookkeeping each. A larger checkpoint interval (4096 pages, 64 MiB
  // at that size): fewer, longer copies of the WAL into the database while
  // ingest is busy. 64 MiB of page cache keeps the pages that each commit
  // touches in memory.
  ACCEL_TRY(store->exec(
      "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=4096; "
      "PRAGMA cache_size=-65536;"));
  ACCEL_TRY(
      store->exec(sync == Sync::kFull ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
  ACCEL_TRY(store->createSchema());
  store->prepared_ = std::make_unique<Prepared>(db);
  if (!store->prepared_->ok()) return sqlError(db, "prepare statements");
  // The summaries' reader. Under WAL it sees the last commit and never waits
  // for one in progress; what a batch in flight changed, the ingest thread
  // still holds in its cache (Ingestor::finish).
  sqlite3* reader = nullptr;
  rc = sqlite3_open_v2(path.c_str(), &reader,
                       SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX, nullptr);
  store->reader_ = std::make_unique<Reader>(reader);
  if (rc != SQLITE_OK) return sqlError(reader, "open " + path + " for reading");
  sqlite3_busy_timeout(reader, 5000);
  store->reader_->load_job = std::make_unique<Stmt>(reader, kLoadJob);
  if (!store->reader_->load_job->ok()) return sqlError(reader, "prepare statements");
  return store;
}

Store::Store(sqlite3* db) : db_(db) {}

Store::~Store() {
  prepared_.reset();  // statements before their connection
  reader_.reset();
  sqlite3_close_v2(db_);
}

Status Store::exec(const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) == SQLITE_OK) return okStatus();
  std::string text = msg ? msg : "unknown";
  sqlite3_free(msg);
  return Error(ErrorCode::kIo, std::string("sqlite: ") + text);
}

Result<std::map<StreamKey, uint64_t>> Store::loadProgress() {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT node, epoch, acked_seq FROM streams");
  if (!s.ok()) return sqlError(db_, "load progress");
  std::map<StreamKey, uint64_t> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) out[{s.text(0), uint64_t(s.i64(1))}] = uint64_t(s.i64(2));
  if (rc != SQLITE_DONE) return sqlError(db_, "load progress");
  return out;
}

Result<std::vector<uint32_t>> Store::loadHeldJobs() {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT job_id FROM held_jobs");
  if (!s.ok()) return sqlError(db_, "load held jobs");
  std::vector<uint32_t> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) out.push_back(uint32_t(s.i64(0)));
  if (rc != SQLITE_DONE) return sqlError(db_, "load held jobs");
  return out;
}

Result<std::optional<JobSummary>> Store::loadJob(uint32_t job_id) {
  if (reader_ && reader_->load_job) {
    std::lock_guard lock(reader_->mu);
    return readJob(reader_->db, *reader_->load_job, job_id);
  }
  std::lock_guard lock(mu_);
  Stmt s(db_, kLoadJob);
  if (!s.ok()) return sqlError(db_, "load job");
  return readJob(db_, s, job_id);
}

Status Store::commit(const Batch& b) {
  std::lock_guard lock(mu_);
  Prepared& p = *prepared_;
  if (!p.begin.run().ok()) return sqlError(db_, "begin");
  auto fail = [&](const char* what) {
    Error e = sqlError(db_, what);
    (void)p.rollback.run();
    return e;
  };
  p.spans.clear();
  (void)p.ranges.take();  // left over from a commit that failed
  // Whole groups through the many-row statement, the rest one by one. The
  // rows of one statement get consecutive rowids (one writer, no
  // AUTOINCREMENT), the last of them is last_insert_rowid.
  for (size_t i = 0; i < b.events.size();) {
    size_t n = b.events.size() - i >= kEventsPerInsert ? kEventsPerInsert : 1;
    Stmt& insert = n == 1 ? p.event : p.events;
    for (size_t k = 0; k < n; ++k) {
      const BatchEvent& e = b.events[i + k];
      int c = int(k) * kEventColumns;
      insert.view(c + 1, e.header.node)
          .bind(c + 2, int64_t(e.header.epoch))
          .bind(c + 3, int64_t(e.header.seq));
      insert.bind(c + 4, e.header.time_ns)
          .view(c + 5, e.kind)
          .bind(c + 6, int64_t{e.job_id})
          .bind(c + 7, e.received_ns);
      insert.blob(c + 8, std::span(b.bytes).subspan(e.offset, e.size));
    }
    if (!insert.run().ok()) return fail("insert event");
    int64_t row = sqlite3_last_insert_rowid(db_) - int64_t(n) + 1;
    for (size_t k = 0; k < n; ++k, ++row) {
      uint32_t job = b.events[i + k].job_id;
      if (job == 0) continue;
      auto [span, fresh] = p.spans.try_emplace(job, row, row);
      if (!fresh) span->second.second = row;
      p.ranges.add(job, row);
    }
    i += n;
  }
  for (const auto& [job, rows] : p.spans)
    if (!p.span.bind(1, int64_t{job}).bind(2, rows.first).bind(3, rows.second).run().ok())
      return fail("job span");
  for (const auto& r : p.ranges.take())
    if (!p.range.bind(1, int64_t{r.job_id}).bind(2, r.first_row).bind(3, r.last_row).run().ok())
      return fail("job range");
  for (const auto& [key, seq] : b.progress)
    if (!p.stream.view(1, key.first)
             .bind(2, int64_t(key.second))
             .bind(3, int64_t(seq))
             .bind(4, b.now_ns)
             .run()
             .ok())
      return fail("update stream");
  // Rare (an id given to a new job): statements made when needed. The
  // earlier job's wait for its missing epilogs ends with it.
  for (const auto& n : b.new_jobs) {
    const JobInstance& i = n.instance;
    Stmt keep(db_,
              "INSERT OR REPLACE INTO archived_jobs(job_id, instance, state, archived_ns) "
              "VALUES(?,?,?,?)");
    Stmt latest(db_,
                "INSERT OR REPLACE INTO job_instances(job_id, instance, since_ns, uid) "
                "VALUES(?,?,?,?)");
    if (!keep.bind(1, int64_t{i.job_id})
             .bind(2, int64_t{n.archived.instance})
             .bind(3, toStateJson(n.archived))
             .bind(4, b.now_ns)
             .run()
             .ok())
      return fail("archive job");
    if (!latest.bind(1, int64_t{i.job_id})
             .bind(2, int64_t{i.instance})
             .bind(3, i.since_ns)
             .bind(4, int64_t{i.uid})
             .run()
             .ok())
      return fail("new job under an id");
    if (!p.unwait.bind(1, int64_t{i.job_id}).run().ok()) return fail("end wait");
  }
  for (const auto& j : b.jobs) {
    if (!p.job.bind(1, int64_t{j.job_id}).bind(2, toStateJson(j)).bind(3, b.now_ns).run().ok())
      return fail("save job");
    if (!j.held.empty() && !p.hold.bind(1, int64_t{j.job_id}).run().ok()) return fail("held job");
  }
  for (uint32_t job : b.released_jobs)
    if (!p.release.bind(1, int64_t{job}).run().ok()) return fail("release job");
  // A job due now waits no longer (its last epilog came, or its wait ran out).
  for (uint32_t job : b.comment_jobs) {
    if (!p.comment.bind(1, int64_t{job}).bind(2, b.now_ns).run().ok()) return fail("queue comment");
    if (!p.unwait.bind(1, int64_t{job}).run().ok()) return fail("end wait");
  }
  for (const auto& w : b.waits)
    if (!p.wait.bind(1, int64_t{w.job_id}).bind(2, w.due_ns).run().ok())
      return fail("wait for nodes");
  for (const auto& [node, heard] : b.nodes) {
    if (!p.seen.view(1, node).bind(2, heard.last_event_ns).run().ok()) return fail("node seen");
    if (!heard.heartbeat) continue;
    const event::NodeHeartbeat& hb = *heard.heartbeat;
    p.beat.bind(1, heard.heartbeat_ns)
        .bind(2, int64_t{hb.interval_s})
        .bind(3, int64_t{hb.accelerators});
    p.beat.bind(4, int64_t{hb.accelerators_busy}).view(5, hb.accel_kind).bind(6, int64_t{hb.jobs});
    if (!p.beat.bind(7, int64_t(hb.backlog)).view(8, node).run().ok())
      return fail("node heartbeat");
  }
  if (!p.commit.run().ok()) return fail("commit");
  return okStatus();
}

std::string nodeState(const NodeHeard& heard, int64_t now_ns) {
  if (!heard.heartbeat || heard.heartbeat->interval_s == 0) return "no-heartbeat";
  const int64_t allowed_ns = int64_t{3} * heard.heartbeat->interval_s * 1'000'000'000;
  return now_ns - heard.last_event_ns <= allowed_ns ? "alive" : "late";
}

Result<std::vector<NodeRow>> Store::readNodes() {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "SELECT node, last_event_ns, heartbeat_ns, interval_s, accelerators, busy, accel_kind, "
         "jobs, backlog "
         "FROM nodes ORDER BY node");
  if (!s.ok()) return sqlError(db_, "nodes");
  std::vector<NodeRow> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    NodeRow r{s.text(0), {s.i64(1), std::nullopt, s.i64(2)}};
    if (r.heard.heartbeat_ns != 0)
      r.heard.heartbeat = event::NodeHeartbeat{.accelerators = uint32_t(s.i64(4)),
                                               .accelerators_busy = uint32_t(s.i64(5)),
                                               .accel_kind = s.text(6),
                                               .jobs = uint32_t(s.i64(7)),
                                               .backlog = uint64_t(s.i64(8)),
                                               .interval_s = uint32_t(s.i64(3))};
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return sqlError(db_, "nodes");
  return out;
}

Result<std::vector<PendingComment>> Store::duePending(int64_t now_ns, int limit) {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "SELECT job_id, generation, attempts FROM pending_comments WHERE next_ns <= ? ORDER BY "
         "next_ns LIMIT ?");
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
  std::lock_guard lock(mu_);
  return finishLocked(job_id, generation);
}

Status Store::finishLocked(uint32_t job_id, uint64_t generation) {
  Stmt s(db_, "DELETE FROM pending_comments WHERE job_id = ? AND generation = ?");
  if (!s.ok()) return sqlError(db_, "finish comment");
  return s.bind(1, int64_t{job_id}).bind(2, int64_t(generation)).run();
}

Status Store::deferPending(uint32_t job_id, uint64_t generation, int64_t next_ns,
                           const std::string& error) {
  std::lock_guard lock(mu_);
  return deferLocked(job_id, generation, next_ns, error);
}

Status Store::deferLocked(uint32_t job_id, uint64_t generation, int64_t next_ns,
                          const std::string& error) {
  Stmt s(db_,
         "UPDATE pending_comments SET attempts = attempts + 1, next_ns = ?, last_error = ? "
         "WHERE job_id = ? AND generation = ?");
  if (!s.ok()) return sqlError(db_, "defer comment");
  return s.bind(1, next_ns)
      .bind(2, error)
      .bind(3, int64_t{job_id})
      .bind(4, int64_t(generation))
      .run();
}

// A batch of writes settles in one transaction: one commit (and fsync) for
// the batch, not one per job.
Status Store::settlePending(const std::vector<SettledComment>& settled) {
  if (settled.empty()) return okStatus();
  std::lock_guard lock(mu_);
  ACCEL_TRY(exec("BEGIN IMMEDIATE"));
  Status s = okStatus();
  for (const auto& c : settled) {
    s = c.done ? finishLocked(c.job_id, c.generation)
               : deferLocked(c.job_id, c.generation, c.next_ns, c.error);
    if (!s.ok()) break;
  }
  if (s.ok()) s = exec("COMMIT");
  if (!s.ok()) {
    (void)exec("ROLLBACK");
    return s.error();
  }
  return okStatus();
}

Result<int64_t> Store::pendingCount() {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT count(*) FROM pending_comments");
  if (!s.ok() || s.step() != SQLITE_ROW) return sqlError(db_, "count comments");
  return s.i64(0);
}

// Looks before it writes: most calls find nothing due, and a write
// transaction would hold up the ingest thread's commits for nothing.
Result<int> Store::releaseWaits(int64_t now_ns) {
  std::lock_guard lock(mu_);
  Stmt due(db_, "SELECT count(*) FROM summary_waits WHERE due_ns <= ?");
  if (!due.ok()) return sqlError(db_, "summary waits");
  due.bind(1, now_ns);
  if (due.step() != SQLITE_ROW) return sqlError(db_, "summary waits");
  int64_t n = due.i64(0);
  due.done();
  if (n == 0) return 0;
  ACCEL_TRY(exec("BEGIN IMMEDIATE"));
  Stmt queue(db_,
             "INSERT INTO pending_comments(job_id,generation,attempts,next_ns) "
             "SELECT job_id, 1, 0, ?1 FROM summary_waits WHERE due_ns <= ?1 "
             "ON CONFLICT(job_id) DO UPDATE SET generation=generation+1, attempts=0, "
             "next_ns=excluded.next_ns");
  Stmt forget(db_, "DELETE FROM summary_waits WHERE due_ns <= ?");
  Status s = okStatus();
  if (!queue.ok() || !forget.ok()) s = sqlError(db_, "release waits");
  if (s.ok()) s = queue.bind(1, now_ns).run();
  int queued = sqlite3_changes(db_);
  if (s.ok()) s = forget.bind(1, now_ns).run();
  if (s.ok()) s = exec("COMMIT");
  if (!s.ok()) {
    (void)exec("ROLLBACK");
    return s.error();
  }
  return queued;
}

Result<std::optional<int64_t>> Store::waitingUntil(uint32_t job_id) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT due_ns FROM summary_waits WHERE job_id = ?");
  if (!s.ok()) return sqlError(db_, "summary wait");
  s.bind(1, int64_t{job_id});
  int rc = s.step();
  if (rc == SQLITE_DONE) return std::optional<int64_t>();
  if (rc != SQLITE_ROW) return sqlError(db_, "summary wait");
  return std::optional<int64_t>(s.i64(0));
}

}  // namespace accel::aggregator
