// AdminComment writes through a stateful fake: merge with other content,
// retry while unreachable (back-fill), rate limit, newer summaries win.
#include <gtest/gtest.h>

#include "accel/aggregator/admin_comment.h"
#include "accel/aggregator/comment_writer.h"
#include "accel/aggregator/fake_accounting.h"
#include "accel/aggregator/ingest.h"
#include "accel/common/safe_file.h"

namespace accel::aggregator {
namespace {

using namespace accel::event;
constexpr int64_t kSec = 1'000'000'000;

class CommentWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/accel-comment-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto store = Store::open(dir_ + "/events.db", Store::Mode::kReadWrite);
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    ingestor_ = std::make_unique<Ingestor>(*store_, metrics_, 64 * 1024);
    ASSERT_TRUE(ingestor_->load().ok());
    writer_ = std::make_unique<CommentWriter>(*store_, fake_, metrics_, CommentWriterOptions{2, std::chrono::seconds(2), std::chrono::seconds(60)},
                                              [this] { return now_; });
  }
  void TearDown() override { (void)removeTree(dir_); }
  void finishJob(uint32_t job, uint64_t seq) {
    auto a = encode({"n1", 1, seq, 1, 1}, PrologFinished{job, JobResult::kOk, {"cuda0"}, "", 1, "", "gpu"});
    auto b = encode({"n1", 1, seq + 1, 1, 1}, EpilogFinished{job});
    ASSERT_TRUE(ingestor_->offer("n1", a, now_));
    ASSERT_TRUE(ingestor_->offer("n1", b, now_));
    ASSERT_TRUE(ingestor_->commit(now_).ok());
  }

  std::string dir_;
  Metrics metrics_;
  FakeAccounting fake_;
  int64_t now_ = 1000 * kSec;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Ingestor> ingestor_;
  std::unique_ptr<CommentWriter> writer_;
};

TEST_F(CommentWriterTest, WritesSummaryBesideExistingContent) {
  fake_.addJob(42, "JS1:abc");
  finishJob(42, 1);
  now_ += kSec;
  EXPECT_EQ(*writer_->runOnce(), 1);
  std::string c = fake_.comment(42);
  EXPECT_EQ(c.rfind("JS1:abc;accel={\"v\":1,", 0), 0u) << c;
  EXPECT_NE(extractAccelSegment(c).find("\"accel\":\"gpu\""), std::string::npos);
  EXPECT_EQ(*store_->pendingCount(), 0);
}

TEST_F(CommentWriterTest, OutageIsBackFilledAfterwards) {
  fake_.addJob(42);
  fake_.setReachable(false);
  finishJob(42, 1);
  now_ += kSec;
  EXPECT_EQ(*writer_->runOnce(), 0);
  EXPECT_EQ(metrics_.comment_failures, 1u);
  EXPECT_EQ(*store_->pendingCount(), 1);
  fake_.setReachable(true);
  now_ += kSec;  // before the retry time: nothing happens yet
  EXPECT_EQ(*writer_->runOnce(), 0);
  now_ += 5 * kSec;
  EXPECT_EQ(*writer_->runOnce(), 1);
  EXPECT_FALSE(extractAccelSegment(fake_.comment(42)).empty());
}

TEST_F(CommentWriterTest, JobNotYetInAccountingIsRetried) {
  finishJob(42, 1);
  now_ += kSec;
  EXPECT_EQ(*writer_->runOnce(), 0);
  fake_.addJob(42);
  now_ += 10 * kSec;
  EXPECT_EQ(*writer_->runOnce(), 1);
}

TEST_F(CommentWriterTest, RateLimitSpreadsWrites) {
  for (uint32_t j = 1; j <= 6; ++j) fake_.addJob(j), finishJob(j, 2 * j - 1);
  now_ += 10 * kSec;
  EXPECT_EQ(*writer_->runOnce(), 2);  // burst of writes_per_second
  EXPECT_EQ(*writer_->runOnce(), 0);  // no time passed
  now_ += kSec;
  EXPECT_EQ(*writer_->runOnce(), 2);
  now_ += kSec;
  EXPECT_EQ(*writer_->runOnce(), 2);
  EXPECT_EQ(fake_.writes(), 6);
}

TEST_F(CommentWriterTest, UnchangedCommentIsNotRewritten) {
  fake_.addJob(42);
  finishJob(42, 1);
  now_ += kSec;
  EXPECT_EQ(*writer_->runOnce(), 1);
  auto again = encode({"n1", 1, 3, 1, 1}, EpilogFinished{42});  // queues the job again, same summary
  ASSERT_TRUE(ingestor_->offer("n1", again, now_));
  ASSERT_TRUE(ingestor_->commit(now_).ok());
  now_ += kSec;
  EXPECT_EQ(*writer_->runOnce(), 1);
  EXPECT_EQ(fake_.writes(), 1);
}

}  // namespace
}  // namespace accel::aggregator
