// Reading events back: by job through job_ranges, page by page, with a
// bound on the rows each call examines.
#include <algorithm>
#include <limits>
#include <memory>
#include <variant>

#include "accel/aggregator/store.h"
#include "store_sql.h"

namespace accel::aggregator {
namespace {

using store_sql::sqlError;
using store_sql::Stmt;

constexpr const char* kColumns =
    "SELECT rowid,node,epoch,seq,time_ns,kind,job_id,received_ns,envelope FROM events ";

// Every row of a query of kColumns, appended to `out`; leaves `s` ready for reuse.
Status readRows(sqlite3* db, Stmt& s, std::vector<StoredEvent>& out) {
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
  Status st = rc == SQLITE_DONE ? okStatus() : Status(sqlError(db, "read events"));
  s.done();
  return st;
}

// The job's ranges from the one holding row `from` (or the first after it)
// on, in order; the seek is on job_ranges' key.
constexpr const char* kRangesFrom =
    "SELECT first_row, last_row FROM job_ranges WHERE job_id = ?1 AND first_row >= "
    "coalesce((SELECT max(first_row) FROM job_ranges WHERE job_id = ?1 AND first_row <= ?2), 0) "
    "ORDER BY first_row";

constexpr const char* kRowsBetween =
    "WHERE rowid BETWEEN ?1 AND ?2 AND job_id = ?3 AND (?4 IS NULL OR node = ?4) "
    "AND received_ns >= ?6 AND received_ns < ?7 ORDER BY rowid LIMIT ?5";

int64_t budgetOf(const EventFilter& f) {
  return f.max_scanned > 0 ? f.max_scanned : std::numeric_limits<int64_t>::max();
}

}  // namespace

Result<std::vector<StoredEvent>> Store::readEvents(const EventFilter& f) {
  EventFilter whole = f;
  whole.max_scanned = 0;
  auto page = readEventPage(whole);
  if (!page.ok()) return page.error();
  return std::move(page->rows);
}

Result<EventPage> Store::readEventPage(const EventFilter& f) {
  std::lock_guard lock(mu_);
  if (!f.job_id) return readAllLocked(f);
  Stmt ranges(db_, kRangesFrom);
  if (!ranges.ok()) return readSpanLocked(f);  // a read-only store from before job_ranges
  Stmt rows(db_, (std::string(kColumns) + kRowsBetween).c_str());
  if (!rows.ok()) return sqlError(db_, "read events");
  EventPage page{{}, f.after_row, false};
  int64_t budget = budgetOf(f);
  ranges.bind(1, int64_t{*f.job_id}).bind(2, f.after_row + 1);
  int rc;
  while ((rc = ranges.step()) == SQLITE_ROW) {
    const bool late =
        page.examined > 0 && f.deadline && std::chrono::steady_clock::now() >= *f.deadline;
    if (budget == 0 || late) {  // rows may remain: the next call goes on from next_row
      page.more = true;
      break;
    }
    const int64_t lo = std::max(ranges.i64(0), f.after_row + 1);
    int64_t hi = ranges.i64(1);
    if (lo > hi) continue;
    const bool cut = hi - lo >= budget;
    if (cut) hi = lo + budget - 1;
    budget -= hi - lo + 1;
    page.examined += hi - lo + 1;
    rows.bind(1, lo).bind(2, hi).bind(3, int64_t{*f.job_id});
    if (f.node) rows.bind(4, *f.node);
    rows.bind(5, int64_t{f.limit} - int64_t(page.rows.size()))
        .bind(6, f.since_ns)
        .bind(7, f.before_ns);
    Status read = readRows(db_, rows, page.rows);
    if (!read.ok()) {
      ranges.done();
      return read.error();
    }
    if (page.rows.size() >= size_t(f.limit)) {
      page.more = true;
      page.next_row = page.rows.back().row;
      break;
    }
    page.next_row = page.rows.empty() ? hi : std::max(hi, page.rows.back().row);
    if (cut) {
      page.more = true;
      break;
    }
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    Error e = sqlError(db_, "read job ranges");
    ranges.done();
    return e;
  }
  ranges.done();
  if (!page.more) page.next_row = page.rows.empty() ? f.after_row : page.rows.back().row;
  return page;
}

// Without a job: the rows after `after_row`, at most max_scanned of them examined.
Result<EventPage> Store::readAllLocked(const EventFilter& f) {
  const int64_t budget = budgetOf(f);
  const int64_t hi = f.after_row > std::numeric_limits<int64_t>::max() - budget
                         ? std::numeric_limits<int64_t>::max()
                         : f.after_row + budget;
  Stmt s(db_,
         (std::string(kColumns) + "WHERE rowid > ?1 AND rowid <= ?2 AND (?3 IS NULL OR node = ?3) "
                                  "ORDER BY rowid LIMIT ?4")
             .c_str());
  if (!s.ok()) return sqlError(db_, "read events");
  s.bind(1, f.after_row).bind(2, hi).bind(4, int64_t{f.limit});
  if (f.node) s.bind(3, *f.node);
  EventPage page{{}, f.after_row, false};
  ACCEL_TRY(readRows(db_, s, page.rows));
  page.examined = page.rows.empty() ? 0 : page.rows.back().row - f.after_row;
  if (page.rows.size() >= size_t(f.limit)) {
    page.more = true;
    page.next_row = page.rows.back().row;
    return page;
  }
  if (f.max_scanned > 0) page.examined = hi - f.after_row;
  Stmt last(db_, "SELECT coalesce(max(rowid), 0) FROM events");
  if (!last.ok() || last.step() != SQLITE_ROW) return sqlError(db_, "read last row");
  page.more = last.i64(0) > hi;
  page.next_row = page.more ? hi : page.rows.empty() ? f.after_row : page.rows.back().row;
  return page;
}

// A database without job_ranges, opened read-only: the rows within the
// job's span (job_spans), or every row when that is missing too.
Result<EventPage> Store::readSpanLocked(const EventFilter& f) {
  constexpr const char* kFilter =
      "rowid > ?1 AND (?2 IS NULL OR job_id = ?2) AND (?3 IS NULL OR node = ?3) ";
  auto s = std::make_unique<Stmt>(
      db_, (std::string(kColumns) +
            "WHERE rowid >= (SELECT first_row FROM job_spans WHERE job_id = ?2) "
            "AND rowid <= (SELECT last_row FROM job_spans WHERE job_id = ?2) AND " +
            kFilter + "ORDER BY rowid LIMIT ?4")
               .c_str());
  if (!s->ok())
    s = std::make_unique<Stmt>(
        db_, (std::string(kColumns) + "WHERE " + kFilter + "ORDER BY rowid LIMIT ?4").c_str());
  if (!s->ok()) return sqlError(db_, "read events");
  s->bind(1, f.after_row).bind(2, int64_t{*f.job_id}).bind(4, int64_t{f.limit});
  if (f.node) s->bind(3, *f.node);
  EventPage page{{}, f.after_row, false};
  ACCEL_TRY(readRows(db_, *s, page.rows));
  page.more = page.rows.size() >= size_t(f.limit);
  if (!page.rows.empty()) page.next_row = page.rows.back().row;
  return page;
}

Result<std::optional<JobInstance>> Store::jobInstance(uint32_t job_id) {
  std::lock_guard lock(mu_);
  return instanceLocked(job_id);
}

// A database from before reused ids were told apart has no job_instances:
// every event of an id is its one job's.
Result<std::optional<JobInstance>> Store::instanceLocked(uint32_t job_id) {
  Stmt s(db_, "SELECT instance, since_ns, uid FROM job_instances WHERE job_id = ?");
  if (!s.ok()) return std::optional<JobInstance>();
  s.bind(1, int64_t{job_id});
  int rc = s.step();
  if (rc == SQLITE_DONE) return std::optional<JobInstance>();
  if (rc != SQLITE_ROW) return sqlError(db_, "read job instance");
  return std::optional<JobInstance>(
      JobInstance{job_id, uint32_t(s.i64(0)), s.i64(1), uint32_t(s.i64(2))});
}

Result<std::optional<int64_t>> Store::heldSince(uint32_t job_id) {
  {
    std::lock_guard lock(mu_);
    Stmt s(db_, "SELECT 1 FROM held_jobs WHERE job_id = ?");
    if (!s.ok()) return sqlError(db_, "read held jobs");
    s.bind(1, int64_t{job_id});
    int rc = s.step();
    if (rc == SQLITE_DONE) return std::optional<int64_t>();
    if (rc != SQLITE_ROW) return sqlError(db_, "read held jobs");
  }
  auto job = loadJob(job_id);
  if (!job.ok()) return job.error();
  if (!*job || (*job)->held.empty()) return std::optional<int64_t>();
  int64_t first = (*job)->held.front().received_ns;
  for (const auto& h : (*job)->held) first = std::min(first, h.received_ns);
  return std::optional<int64_t>(first);
}

Result<std::vector<JobSummary>> Store::archivedJobs(uint32_t job_id) {
  std::lock_guard lock(mu_);
  std::vector<JobSummary> out;
  Stmt s(db_, "SELECT state FROM archived_jobs WHERE job_id = ? ORDER BY instance");
  if (!s.ok()) return out;
  s.bind(1, int64_t{job_id});
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    auto job = fromStateJson(s.text(0));
    if (!job.ok()) return job.error();
    out.push_back(std::move(*job));
  }
  if (rc != SQLITE_DONE) return sqlError(db_, "read archived jobs");
  return out;
}

// Through job_ranges; the first prolog_started is near the job's first row,
// so this stops early.
Result<std::optional<uint32_t>> Store::jobOwner(uint32_t job_id) {
  std::lock_guard lock(mu_);
  auto latest = instanceLocked(job_id);
  if (!latest.ok()) return latest.error();
  if (*latest) return std::optional<uint32_t>((*latest)->uid);
  auto s =
      std::make_unique<Stmt>(db_,
                             "SELECT e.envelope FROM job_ranges r JOIN events e "
                             "ON e.rowid BETWEEN r.first_row AND r.last_row "
                             "WHERE r.job_id = ?1 AND e.job_id = ?1 AND e.kind = 'prolog_started' "
                             "ORDER BY r.first_row, e.rowid");
  if (!s->ok())
    s = std::make_unique<Stmt>(
        db_,
        "SELECT envelope FROM events WHERE rowid >= (SELECT first_row FROM job_spans WHERE "
        "job_id = ?1) AND rowid <= (SELECT last_row FROM job_spans WHERE job_id = ?1) "
        "AND job_id = ?1 AND kind = 'prolog_started' ORDER BY rowid");
  if (!s->ok()) return sqlError(db_, "read job owner");
  s->bind(1, int64_t{job_id});
  int rc;
  while ((rc = s->step()) == SQLITE_ROW) {
    auto bytes = s->bytes(0);
    auto env = event::decode(bytes);
    if (!env.ok() || !env->event) continue;
    if (const auto* p = std::get_if<event::PrologStarted>(&*env->event))
      return std::optional<uint32_t>(p->uid);
  }
  if (rc != SQLITE_DONE) return sqlError(db_, "read job owner");
  return std::optional<uint32_t>();
}

Result<int64_t> Store::lastRow() {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT coalesce(max(rowid), 0) FROM events");
  if (!s.ok() || s.step() != SQLITE_ROW) return sqlError(db_, "read last row");
  return s.i64(0);
}

Result<Store::NewRows> Store::jobsAfter(int64_t after_row) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT job_id, max(rowid) FROM events WHERE rowid > ?1 GROUP BY job_id");
  if (!s.ok()) return sqlError(db_, "read new rows");
  s.bind(1, after_row);
  NewRows out{{}, after_row};
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    out.jobs.push_back(uint32_t(s.i64(0)));
    out.last_row = std::max(out.last_row, s.i64(1));
  }
  if (rc != SQLITE_DONE) return sqlError(db_, "read new rows");
  return out;
}

}  // namespace accel::aggregator
