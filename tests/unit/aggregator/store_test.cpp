// The store's schema upgrades: a database written before job_spans keeps its
// events readable by job, and loses the per-event job index; one written
// before job_ranges gets them. Batches of any size keep every event in order
// and every job's span exact. A job is read through its ranges, page by
// page, each page examining a bounded number of rows.
#include "accel/aggregator/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <functional>

#include "accel/common/safe_file.h"
#include "temp_dir.h"

namespace accel::aggregator {
namespace {

// The schema of version 0, as earlier releases created it.
constexpr const char* kVersion0 = R"(
CREATE TABLE events(
  node TEXT NOT NULL, epoch INTEGER NOT NULL, seq INTEGER NOT NULL,
  time_ns INTEGER NOT NULL, kind TEXT NOT NULL, job_id INTEGER NOT NULL,
  received_ns INTEGER NOT NULL, envelope BLOB NOT NULL);
CREATE INDEX events_by_job ON events(job_id) WHERE job_id != 0;
INSERT INTO events VALUES('n1', 1, 1, 1, 'agent_started', 0, 1, x'00');
INSERT INTO events VALUES('n1', 1, 2, 1, 'task_started', 5, 1, x'00');
INSERT INTO events VALUES('n1', 1, 3, 1, 'task_started', 6, 1, x'00');
INSERT INTO events VALUES('n1', 1, 4, 1, 'task_started', 5, 1, x'00');
)";

class StoreTest : public ::testing::Test {
 protected:
  void TearDown() override { (void)tmp_.remove(); }
  std::string path() const { return dir_ + "/events.db"; }
  void execRaw(const char* sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path().c_str(), &db), SQLITE_OK);
    char* msg = nullptr;
    int rc = sqlite3_exec(db, sql, nullptr, nullptr, &msg);
    std::string text = msg ? msg : "";
    sqlite3_free(msg);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << text;
  }
  int64_t countRaw(const char* sql) {
    sqlite3* db = nullptr;
    sqlite3_stmt* s = nullptr;
    int64_t n = -1;
    if (sqlite3_open(path().c_str(), &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
      n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
  }
  support::TempDir tmp_{"accel-store-test"};
  std::string dir_ = tmp_.path();
};

TEST_F(StoreTest, OldDatabaseKeepsItsEventsReadableByJob) {
  execRaw(kVersion0);
  auto store = Store::open(path(), Store::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto rows = (*store)->readEvents({5, std::nullopt, 0, 100});
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].header.seq, 2u);
  EXPECT_EQ((*rows)[1].header.seq, 4u);
  EXPECT_EQ(countRaw("SELECT count(*) FROM sqlite_master WHERE name = 'events_by_job'"), 0);
  EXPECT_EQ(countRaw("SELECT count(*) FROM job_spans"), 2);
}

TEST_F(StoreTest, UpgradeHappensOnce) {
  execRaw(kVersion0);
  ASSERT_TRUE(Store::open(path(), Store::Mode::kReadWrite).ok());
  execRaw("DELETE FROM job_spans");
  ASSERT_TRUE(Store::open(path(), Store::Mode::kReadWrite).ok());
  EXPECT_EQ(countRaw("SELECT count(*) FROM job_spans"), 0);
  EXPECT_EQ(countRaw("PRAGMA user_version"), 2);
}

TEST_F(StoreTest, OldDatabaseOpenedReadOnlyIsStillReadableByJob) {
  execRaw(kVersion0);
  auto store = Store::open(path(), Store::Mode::kReadOnly);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto rows = (*store)->readEvents({6, std::nullopt, 0, 100});
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].header.seq, 3u);
}

// A batch of `n` events of one stream, numbered from `first`; event i
// belongs to job (i % 3) (0: no job).
Batch batchOf(uint64_t first, size_t n) {
  Batch b;
  for (size_t i = 0; i < n; ++i) {
    uint64_t seq = first + i;
    uint8_t byte = uint8_t(seq);
    b.events.push_back(
        {{"n1", 1, seq, int64_t(seq), 0}, "task_started", uint32_t(seq % 3), 1, b.bytes.size(), 1});
    b.bytes.push_back(byte);
  }
  b.progress[{"n1", 1}] = first + n - 1;
  return b;
}

// 300 events, then 200 more: whole groups of the many-row insert and a rest
// of single rows, both in the middle of a job's events.
TEST_F(StoreTest, LargeBatchesKeepEveryEventAndEveryJobsSpan) {
  auto store = Store::open(path(), Store::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message();
  ASSERT_TRUE((*store)->commit(batchOf(1, 300)).ok());
  ASSERT_TRUE((*store)->commit(batchOf(301, 200)).ok());
  auto all = (*store)->readEvents({std::nullopt, std::nullopt, 0, 1000});
  ASSERT_TRUE(all.ok()) << all.error().message();
  ASSERT_EQ(all->size(), 500u);
  for (size_t i = 0; i < all->size(); ++i) {
    const StoredEvent& e = (*all)[i];
    ASSERT_EQ(e.header.seq, i + 1);
    EXPECT_EQ(e.job_id, uint32_t((i + 1) % 3));
    EXPECT_EQ(e.envelope, std::vector<uint8_t>{uint8_t(i + 1)});
  }
  for (uint32_t job : {1u, 2u}) {
    auto rows = (*store)->readEvents({job, std::nullopt, 0, 1000});
    ASSERT_TRUE(rows.ok()) << rows.error().message();
    ASSERT_EQ(rows->size(), 167u);  // seq 1, 4, ..., 499 and 2, 5, ..., 500
    EXPECT_EQ(rows->front().header.seq, job);
    EXPECT_EQ(rows->back().header.seq, job == 1 ? 499u : 500u);
    for (const auto& e : *rows) EXPECT_EQ(e.job_id, job);
  }
  EXPECT_EQ(countRaw("SELECT first_row FROM job_spans WHERE job_id = 2"), 2);
  EXPECT_EQ(countRaw("SELECT last_row FROM job_spans WHERE job_id = 2"), 500);
}

// The summaries' reader sees each commit as soon as it returns.
TEST_F(StoreTest, SummaryIsReadableRightAfterItsCommit) {
  auto store = Store::open(path(), Store::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto before = (*store)->loadJob(7);
  ASSERT_TRUE(before.ok()) << before.error().message();
  EXPECT_FALSE(before->has_value());
  Batch b = batchOf(1, 1);
  JobSummary job;
  job.job_id = 7;
  job.nodes.insert("n1");
  b.jobs.push_back(job);
  ASSERT_TRUE((*store)->commit(b).ok());
  auto after = (*store)->loadJob(7);
  ASSERT_TRUE(after.ok()) << after.error().message();
  ASSERT_TRUE(after->has_value());
  EXPECT_EQ((*after)->nodes, std::set<std::string>{"n1"});
}

// The schema of version 1 (job_spans, no job_ranges), with job 5's two
// events 199 rows apart and job 6's between them.
void writeVersion1(const std::function<void(const char*)>& exec) {
  exec(R"(
CREATE TABLE events(
  node TEXT NOT NULL, epoch INTEGER NOT NULL, seq INTEGER NOT NULL,
  time_ns INTEGER NOT NULL, kind TEXT NOT NULL, job_id INTEGER NOT NULL,
  received_ns INTEGER NOT NULL, envelope BLOB NOT NULL);
CREATE TABLE job_spans(
  job_id INTEGER PRIMARY KEY, first_row INTEGER NOT NULL, last_row INTEGER NOT NULL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
INSERT INTO events SELECT 'n1', 1, i, i, 'task_started', CASE WHEN i IN (1, 200) THEN 5 ELSE 6 END,
  1, x'00' FROM n;
INSERT INTO job_spans VALUES(5, 1, 200), (6, 2, 199);
PRAGMA user_version = 1;
)");
}

TEST_F(StoreTest, VersionOneDatabaseGetsEachJobsRanges) {
  writeVersion1([this](const char* sql) { execRaw(sql); });
  auto store = Store::open(path(), Store::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message();
  EXPECT_EQ(countRaw("PRAGMA user_version"), 2);
  EXPECT_EQ(countRaw("SELECT count(*) FROM job_ranges WHERE job_id = 5"), 2);
  EXPECT_EQ(countRaw("SELECT count(*) FROM job_ranges WHERE job_id = 6"), 1);
  EXPECT_EQ(countRaw("SELECT last_row FROM job_ranges WHERE job_id = 5 AND first_row = 200"), 200);
  // Two rows examined for job 5, not the 198 of job 6 between them: a bound
  // of 10 still finds both in one page.
  auto page = (*store)->readEventPage({5, std::nullopt, 0, 100, 10});
  ASSERT_TRUE(page.ok()) << page.error().message();
  ASSERT_EQ(page->rows.size(), 2u);
  EXPECT_EQ(page->rows[0].row, 1);
  EXPECT_EQ(page->rows[1].row, 200);
  EXPECT_FALSE(page->more);
  EXPECT_EQ(page->next_row, 200);
  EXPECT_EQ(page->examined, 2);
}

// A deadline already past: the first range is read (each call makes
// progress), the next is left for the next call.
TEST_F(StoreTest, APastDeadlineEndsThePageAfterOneRange) {
  writeVersion1([this](const char* sql) { execRaw(sql); });
  auto store = Store::open(path(), Store::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message();
  EventFilter f{5, std::nullopt, 0, 100, 0, std::chrono::steady_clock::now()};
  auto first = (*store)->readEventPage(f);
  ASSERT_TRUE(first.ok()) << first.error().message();
  ASSERT_EQ(first->rows.size(), 1u);
  EXPECT_TRUE(first->more);
  EXPECT_EQ(first->next_row, 1);
  f.after_row = first->next_row;
  auto second = (*store)->readEventPage(f);
  ASSERT_TRUE(second.ok()) << second.error().message();
  ASSERT_EQ(second->rows.size(), 1u);
  EXPECT_EQ(second->rows[0].row, 200);
  EXPECT_FALSE(second->more);
}

// The query by job seeks job_ranges by its key instead of scanning.
TEST_F(StoreTest, JobRangesAreSearchedByJob) {
  ASSERT_TRUE(Store::open(path(), Store::Mode::kReadWrite).ok());
  sqlite3* db = nullptr;
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "EXPLAIN QUERY PLAN SELECT first_row, last_row FROM job_ranges "
                               "WHERE job_id = 5 AND first_row >= 100 ORDER BY first_row",
                               -1, &s, nullptr),
            SQLITE_OK);
  std::string plan;
  while (sqlite3_step(s) == SQLITE_ROW)
    plan += reinterpret_cast<const char*>(sqlite3_column_text(s, 3)) + std::string("\n");
  sqlite3_finalize(s);
  sqlite3_close(db);
  EXPECT_NE(plan.find("SEARCH job_ranges USING PRIMARY KEY (job_id=? AND first_row>?)"),
            std::string::npos)
      << plan;
}

// Job 1's rows are every third of 3,000; with at most 90 rows examined per
// call, paging on from next_row returns each of them once, in order, and no
// page looks at more than 90 rows (so holds at most 31 of the job's: the
// rows between two ranges are skipped, not looked at).
TEST_F(StoreTest, PagesExamineBoundedRowsAndMissNothing) {
  auto store = Store::open(path(), Store::Mode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message();
  for (uint64_t first = 1; first <= 3000; first += 500)
    ASSERT_TRUE((*store)->commit(batchOf(first, 500)).ok());
  std::vector<int64_t> seen;
  EventFilter f{1u, std::nullopt, 0, 1000, 90};
  for (int calls = 0; calls < 1000; ++calls) {
    auto page = (*store)->readEventPage(f);
    ASSERT_TRUE(page.ok()) << page.error().message();
    EXPECT_LE(page->examined, 90);
    EXPECT_GE(page->examined, int64_t(page->rows.size()));
    EXPECT_LE(page->rows.size(), 31u);
    EXPECT_GE(page->next_row, f.after_row);
    for (const auto& e : page->rows) {
      EXPECT_GT(e.row, f.after_row);
      EXPECT_LE(e.row, page->next_row);
      seen.push_back(e.row);
    }
    f.after_row = page->next_row;
    if (!page->more) break;
  }
  ASSERT_EQ(seen.size(), 1000u);
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], int64_t(3 * i + 1));
  // The limit on rows returned ends a page too, at its last row.
  auto two = (*store)->readEventPage({1u, std::nullopt, 0, 2, 0});
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->rows.size(), 2u);
  EXPECT_TRUE(two->more);
  EXPECT_EQ(two->next_row, 4);
}

}  // namespace
}  // namespace accel::aggregator
