// AdminComment writes through a stateful fake: merge with other content,
// retry while unreachable (back-fill), rate limit, batches, newer summaries win.
#include "accel/aggregator/comment_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "accel/aggregator/ingest.h"
#include "accel/common/safe_file.h"
#include "accel/ipc/admin_comment.h"
#include "fake_accounting.h"
#include "fake_clock.h"
#include "fake_run_checks.h"
#include "temp_dir.h"

namespace accel::aggregator {
namespace {

using namespace accel::event;
constexpr int64_t kSec = 1'000'000'000;

class CommentWriterTest : public ::testing::Test {
 protected:
  void SetUp() override { restart(); }
  void TearDown() override { (void)tmp_.remove(); }
  // Opens the database, as the daemon does when it starts (again): nothing
  // is carried over but what the database holds.
  void restart(int batch_size = 50, double writes_per_second = 2) {
    writer_.reset();
    ingestor_.reset();
    store_.reset();
    auto store = Store::open(dir_ + "/events.db", Store::Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    ingestor_ =
        std::make_unique<Ingestor>(*store_, metrics_, 64 * 1024, kDefaultSummaryWait, &runs_);
    ASSERT_TRUE(ingestor_->load().ok());
    CommentWriterOptions options{writes_per_second, std::chrono::seconds(2),
                                 std::chrono::seconds(60), batch_size};
    writer_ = std::make_unique<CommentWriter>(*store_, fake_, metrics_, options, clock_);
  }
  // One event of a node whose stream is epoch 1, at the current time.
  void send(const std::string& node, const Event& ev) {
    auto bytes = encode({node, 1, ++seq_[node], 1, 1}, ev);
    ASSERT_TRUE(ingestor_->offer(node, bytes, clock_.wallNs()));
    ASSERT_TRUE(ingestor_->commit(clock_.wallNs()).ok());
  }
  void startTwoNodeJob(uint32_t job) {
    for (std::string node : {"n1", "n2"}) {
      send(node, PrologStarted{job, 1000, "alice", "n[1-2]", 2});
      send(node, PrologFinished{job, JobResult::kOk, {"0", "1"}, "", 1, "", "gpu"});
    }
  }
  nlohmann::json written(uint32_t job) {
    return nlohmann::json::parse(ipc::extractAccelSegment(fake_.comment(job)));
  }
  void finishJob(uint32_t job, uint64_t seq) {
    auto a = encode({"n1", 1, seq, 1, 1},
                    PrologFinished{job, JobResult::kOk, {"cuda0"}, "", 1, "", "gpu"});
    auto b = encode({"n1", 1, seq + 1, 1, 1}, EpilogFinished{job});
    ASSERT_TRUE(ingestor_->offer("n1", a, clock_.wallNs()));
    ASSERT_TRUE(ingestor_->offer("n1", b, clock_.wallNs()));
    ASSERT_TRUE(ingestor_->commit(clock_.wallNs()).ok());
  }

  support::TempDir tmp_{"accel-comment-test"};
  std::string dir_ = tmp_.path();
  Metrics metrics_;
  FakeAccounting fake_;
  FakeRunChecks runs_;
  support::FakeClock clock_{1000 * kSec};
  std::map<std::string, uint64_t> seq_;  // send(): each node's last sequence number
  std::unique_ptr<Store> store_;
  std::unique_ptr<Ingestor> ingestor_;
  std::unique_ptr<CommentWriter> writer_;
};

TEST_F(CommentWriterTest, WritesSummaryBesideExistingContent) {
  fake_.addJob(42, "JS1:abc");
  finishJob(42, 1);
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
  std::string c = fake_.comment(42);
  EXPECT_EQ(c.rfind("JS1:abc;accel={\"v\":1,", 0), 0u) << c;
  EXPECT_NE(ipc::extractAccelSegment(c).find("\"accel\":\"gpu\""), std::string::npos);
  EXPECT_EQ(*store_->pendingCount(), 0);
}

TEST_F(CommentWriterTest, OutageIsBackFilledAfterwards) {
  fake_.addJob(42);
  fake_.setReachable(false);
  finishJob(42, 1);
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 0);
  EXPECT_EQ(metrics_.comment_failures, 1u);
  EXPECT_EQ(*store_->pendingCount(), 1);
  fake_.setReachable(true);
  clock_.advance(kSec);  // before the retry time: nothing happens yet
  EXPECT_EQ(*writer_->runOnce(), 0);
  clock_.advance(5 * kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
  EXPECT_FALSE(ipc::extractAccelSegment(fake_.comment(42)).empty());
}

TEST_F(CommentWriterTest, JobNotYetInAccountingIsRetried) {
  finishJob(42, 1);
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 0);
  fake_.addJob(42);
  clock_.advance(10 * kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
}

// A tool set the AdminComment while the job ran: slurmctld sends its copy to
// slurmdbd with the job's end. The summary waits for that end, so it neither
// loses the tool's segment nor is overwritten by slurmctld's copy.
TEST_F(CommentWriterTest, WaitsForTheJobsEndInAccounting) {
  fake_.addRunningJob(42);
  finishJob(42, 1);
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 0);
  EXPECT_EQ(fake_.writes(), 0);
  EXPECT_EQ(metrics_.comment_waits, 1u);
  EXPECT_EQ(metrics_.comment_failures, 0u);
  EXPECT_EQ(*store_->pendingCount(), 1);
  fake_.endJob(42, "JS1:kept");
  clock_.advance(3 * kSec);  // past the first back-off (2 s)
  EXPECT_EQ(*writer_->runOnce(), 1);
  std::string c = fake_.comment(42);
  EXPECT_EQ(c.rfind("JS1:kept;accel={", 0), 0u) << c;
  EXPECT_EQ(*store_->pendingCount(), 0);
  EXPECT_NE(metrics_.render().find("accel_aggregator_comment_waits_total 1"), std::string::npos);
}

// A requeued job's latest record in slurmdbd is its next run, pending: the
// run the summary describes has ended, so the summary is written at once (the
// next run's prolog reads the earlier runs' summaries). Once the next run has
// started, a newer summary waits for its end again.
TEST_F(CommentWriterTest, RequeuedJobsPendingRunDoesNotHoldItsSummary) {
  fake_.addRunningJob(42);
  fake_.requeueJob(42);
  finishJob(42, 1);
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
  EXPECT_EQ(metrics_.comment_waits, 0u);
  EXPECT_FALSE(ipc::extractAccelSegment(fake_.comment(42)).empty());
  fake_.startJob(42);
  finishJob(42, 3);
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 0);
  EXPECT_EQ(metrics_.comment_waits, 1u);
}

// An end that never reaches slurmdbd (a runaway job) holds the summary for a
// bounded time only: after ten waits it is written anyway.
TEST_F(CommentWriterTest, GivesUpWaitingForAnEndThatNeverComes) {
  fake_.addRunningJob(42);
  finishJob(42, 1);
  int waits = 0;
  for (; waits < 20 && fake_.writes() == 0; ++waits) {
    clock_.advance(61 * kSec);  // past any back-off of this writer (at most 60 s)
    (void)writer_->runOnce();
  }
  EXPECT_EQ(fake_.writes(), 1);
  EXPECT_EQ(metrics_.comment_waits, 10u);
  EXPECT_EQ(waits, 11);
  EXPECT_EQ(*store_->pendingCount(), 0);
}

TEST_F(CommentWriterTest, RateLimitSpreadsWrites) {
  for (uint32_t j = 1; j <= 6; ++j) fake_.addJob(j), finishJob(j, 2 * j - 1);
  clock_.advance(10 * kSec);
  EXPECT_EQ(*writer_->runOnce(), 2);  // burst of writes_per_second
  EXPECT_EQ(*writer_->runOnce(), 0);  // no time passed
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 2);
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 2);
  EXPECT_EQ(fake_.writes(), 6);
}

TEST_F(CommentWriterTest, UnchangedCommentIsNotRewritten) {
  fake_.addJob(42);
  finishJob(42, 1);
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
  auto again =
      encode({"n1", 1, 3, 1, 1}, EpilogFinished{42});  // queues the job again, same summary
  ASSERT_TRUE(ingestor_->offer("n1", again, clock_.wallNs()));
  ASSERT_TRUE(ingestor_->commit(clock_.wallNs()).ok());
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
  EXPECT_EQ(fake_.writes(), 1);
}

TEST_F(CommentWriterTest, TwoNodeJobIsWrittenOnceAfterItsLastEpilog) {
  fake_.addJob(42);
  startTwoNodeJob(42);
  send("n1", EpilogFinished{42});
  for (int i = 0; i < 5; ++i) {
    clock_.advance(10 * kSec);
    EXPECT_EQ(*writer_->runOnce(), 0);
  }
  EXPECT_EQ(fake_.writes(), 0);
  send("n2", EpilogFinished{42});
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
  clock_.advance(600 * kSec);  // past the wait: nothing is written a second time
  EXPECT_EQ(*writer_->runOnce(), 0);
  EXPECT_EQ(fake_.writes(), 1);
  auto j = written(42);
  EXPECT_EQ(j["count"], 4);
  EXPECT_EQ(j["nodes"], nlohmann::json::array({"n1", "n2"}));
  EXPECT_FALSE(j.contains("missing_nodes"));
}

// n2 dies after its prolog: the summary goes out 300 s after n1's epilog,
// the aggregator's restart in between notwithstanding, and names n2; n2's
// epilog, coming late, replaces it.
TEST_F(CommentWriterTest, NodeThatNeverReportsIsNamedAfterTheWait) {
  fake_.addJob(42);
  startTwoNodeJob(42);
  send("n1", EpilogFinished{42});
  int64_t first_epilog = clock_.wallNs();
  clock_.advanceTo(first_epilog + 299 * kSec);
  EXPECT_EQ(*writer_->runOnce(), 0);
  restart();
  EXPECT_EQ(*writer_->runOnce(), 0);
  clock_.advanceTo(first_epilog + 300 * kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
  auto j = written(42);
  EXPECT_EQ(j["missing_nodes"], nlohmann::json::array({"n2"}));
  EXPECT_EQ(j["nodes"], nlohmann::json::array({"n1", "n2"}));
  clock_.advance(60 * kSec);
  send("n2", EpilogFinished{42});
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
  EXPECT_FALSE(written(42).contains("missing_nodes"));
  EXPECT_EQ(fake_.writes(), 2);
}

// A backlog goes out in batches: one read and one write connection per
// batch of up to batch_size jobs, never more jobs than the rate allows.
TEST_F(CommentWriterTest, BacklogIsWrittenInBatchesWithinTheRate) {
  restart(/*batch_size=*/50, /*writes_per_second=*/120);
  for (uint32_t j = 1; j <= 130; ++j) fake_.addJob(j), finishJob(j, 2 * j - 1);
  clock_.advance(10 * kSec);
  EXPECT_EQ(*writer_->runOnce(), 120);  // the burst: one second's worth
  EXPECT_EQ(fake_.connections(), 6);    // batches of 50, 50 and 20, each read then written
  EXPECT_EQ(*store_->pendingCount(), 10);
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 10);
  EXPECT_EQ(fake_.connections(), 8);
  EXPECT_EQ(fake_.writes(), 130);
  EXPECT_EQ(metrics_.comment_writes, 130u);
  for (uint32_t j : {1u, 77u, 130u}) EXPECT_EQ(written(j)["accel"], "gpu") << j;
}

// One job slurmdbd does not know yet fails alone: the rest of its batch is
// written, and it is retried later by itself.
TEST_F(CommentWriterTest, AJobUnknownToSlurmdbdDoesNotHoldUpItsBatch) {
  restart(/*batch_size=*/10, /*writes_per_second=*/10);
  for (uint32_t j = 1; j <= 3; ++j) finishJob(j, 2 * j - 1);
  fake_.addJob(1);
  fake_.addJob(3);
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 2);
  EXPECT_EQ(metrics_.comment_failures, 1u);
  EXPECT_EQ(*store_->pendingCount(), 1);
  EXPECT_FALSE(ipc::extractAccelSegment(fake_.comment(1)).empty());
  EXPECT_FALSE(ipc::extractAccelSegment(fake_.comment(3)).empty());
  fake_.addJob(2);
  clock_.advance(10 * kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
  EXPECT_EQ(*store_->pendingCount(), 0);
  EXPECT_EQ(fake_.writes(), 3);
}

// A job queued again (a later run's summary) while its first summary is
// written keeps its queue row: the later summary is written too, once.
TEST_F(CommentWriterTest, SummaryQueuedAgainDuringItsWriteIsWrittenAgain) {
  restart(/*batch_size=*/50, /*writes_per_second=*/1);  // one job a second: the runs below apart
  fake_.addJob(42);
  finishJob(42, 1);
  fake_.onWrite([this] {
    auto again = encode({"n2", 1, 1, 1, 1}, PrologStarted{42, 1000, "alice", "n2", 1, 1});
    auto done = encode({"n2", 1, 2, 1, 1}, EpilogFinished{42});
    ASSERT_TRUE(ingestor_->offer("n2", again, clock_.wallNs()));
    ASSERT_TRUE(ingestor_->offer("n2", done, clock_.wallNs()));
    runs_.answer(42, 1, {"n2"}, clock_.wallNs());  // slurmctld confirms run 1 on n2
    ASSERT_TRUE(ingestor_->settle(clock_.wallNs()));
    ASSERT_TRUE(ingestor_->commit(clock_.wallNs()).ok());
  });
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
  EXPECT_EQ(*store_->pendingCount(), 1);  // the newer generation stays queued
  EXPECT_FALSE(written(42).contains("restarts"));
  clock_.advance(kSec);
  EXPECT_EQ(*writer_->runOnce(), 1);
  EXPECT_EQ(*store_->pendingCount(), 0);
  EXPECT_EQ(written(42)["restarts"], 1);
  EXPECT_EQ(fake_.writes(), 2);
}

}  // namespace
}  // namespace accel::aggregator
