// The store's schema upgrade: a database written before job_spans keeps its
// events readable by job, and loses the per-event job index.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "accel/aggregator/store.h"
#include "accel/common/safe_file.h"

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
  void SetUp() override {
    char tmpl[] = "/tmp/accel-store-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { (void)removeTree(dir_); }
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
    if (sqlite3_open(path().c_str(), &db) == SQLITE_OK && sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
      n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
  }
  std::string dir_;
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
  EXPECT_EQ(countRaw("PRAGMA user_version"), 1);
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

}  // namespace
}  // namespace accel::aggregator
