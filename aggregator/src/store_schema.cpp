// The store's schema and its upgrades (PRAGMA user_version).
#include "accel/aggregator/store.h"
#include "store_sql.h"

namespace accel::aggregator {
namespace {

using store_sql::sqlError;
using store_sql::Stmt;

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS events(
  node TEXT NOT NULL, epoch INTEGER NOT NULL, seq INTEGER NOT NULL,
  time_ns INTEGER NOT NULL, kind TEXT NOT NULL, job_id INTEGER NOT NULL,
  received_ns INTEGER NOT NULL, envelope BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS job_spans(
  job_id INTEGER PRIMARY KEY, first_row INTEGER NOT NULL, last_row INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS job_ranges(
  job_id INTEGER NOT NULL, first_row INTEGER NOT NULL, last_row INTEGER NOT NULL,
  PRIMARY KEY(job_id, first_row)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS streams(
  node TEXT NOT NULL, epoch INTEGER NOT NULL, acked_seq INTEGER NOT NULL,
  updated_ns INTEGER NOT NULL, PRIMARY KEY(node, epoch)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS jobs(
  job_id INTEGER PRIMARY KEY, state TEXT NOT NULL, updated_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pending_comments(
  job_id INTEGER PRIMARY KEY, generation INTEGER NOT NULL, attempts INTEGER NOT NULL,
  next_ns INTEGER NOT NULL, last_error TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS summary_waits(
  job_id INTEGER PRIMARY KEY, due_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS held_jobs(job_id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS job_instances(
  job_id INTEGER PRIMARY KEY, instance INTEGER NOT NULL, since_ns INTEGER NOT NULL,
  uid INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS archived_jobs(
  job_id INTEGER NOT NULL, instance INTEGER NOT NULL, state TEXT NOT NULL,
  archived_ns INTEGER NOT NULL, PRIMARY KEY(job_id, instance)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS nodes(
  node TEXT PRIMARY KEY, last_event_ns INTEGER NOT NULL, heartbeat_ns INTEGER NOT NULL DEFAULT 0,
  interval_s INTEGER NOT NULL DEFAULT 0, accelerators INTEGER NOT NULL DEFAULT 0,
  busy INTEGER NOT NULL DEFAULT 0, accel_kind TEXT NOT NULL DEFAULT '', jobs INTEGER NOT NULL DEFAULT 0,
  backlog INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
)";

// The version a database is brought to on opening it read-write.
constexpr int64_t kSchemaVersion = 2;

// One pass over the stored events in row order (within migrate()'s
// transaction); a store of a million events takes about a second.
Status buildRanges(sqlite3* db) {
  Stmt rows(db, "SELECT rowid, job_id FROM events WHERE job_id != 0 ORDER BY rowid");
  if (!rows.ok()) return sqlError(db, "read events for job_ranges");
  store_sql::RangeBuilder ranges;
  int rc;
  while ((rc = rows.step()) == SQLITE_ROW) ranges.add(uint32_t(rows.i64(1)), rows.i64(0));
  if (rc != SQLITE_DONE) return sqlError(db, "read events for job_ranges");
  rows.done();
  Stmt insert(db, "INSERT OR REPLACE INTO job_ranges(job_id, first_row, last_row) VALUES(?,?,?)");
  if (!insert.ok()) return sqlError(db, "job ranges");
  for (const auto& r : ranges.take())
    if (!insert.bind(1, int64_t{r.job_id}).bind(2, r.first_row).bind(3, r.last_row).run().ok())
      return sqlError(db, "job ranges");
  return okStatus();
}

}  // namespace

Status Store::createSchema() {
  ACCEL_TRY(exec(kSchema));
  return migrate();
}

// Version 1: each job's span of event rows (job_spans) replaces the index of
// every event by job (events_by_job), which cost more than half of each
// commit. The spans are rebuilt from that index before it goes.
// Version 2: each job's rows as ranges (job_ranges), built from the events
// already stored, so that reading a long job no longer examines every row
// stored during its lifetime.
Status Store::migrate() {
  ACCEL_TRY(exec("BEGIN IMMEDIATE"));
  Stmt v(db_, "PRAGMA user_version");
  int64_t version = v.ok() && v.step() == SQLITE_ROW ? v.i64(0) : -1;
  v.done();
  Status s = okStatus();
  if (version < 0) s = sqlError(db_, "schema version");
  if (s.ok() && version < 1)
    s = exec(
        "INSERT OR IGNORE INTO job_spans(job_id, first_row, last_row) "
        "SELECT job_id, min(rowid), max(rowid) FROM events WHERE job_id != 0 GROUP BY job_id; "
        "DROP INDEX IF EXISTS events_by_job;");
  if (s.ok() && version < 2) s = buildRanges(db_);
  if (s.ok() && version < kSchemaVersion)
    s = exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str());
  if (s.ok()) s = exec("COMMIT");
  if (!s.ok()) (void)exec("ROLLBACK");
  return s;
}

}  // namespace accel::aggregator
