#include "accel/aggregator/config.h"

#include <gtest/gtest.h>

#include "accel/aggregator/ingest.h"

namespace accel::aggregator {
namespace {

TEST(AggregatorConfig, EmptyFileGivesDefaults) {
  auto c = parseAggregatorConfig("");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->listen, "tcp://*:7450");
  EXPECT_EQ(c->max_frame_bytes, 65536u);
  EXPECT_EQ(c->comment_writes_per_second, 200u);
  EXPECT_EQ(c->comment_batch_size, 50u);
  EXPECT_EQ(c->comment_connections, 8u);
  EXPECT_TRUE(c->write_comments);
  EXPECT_FALSE(c->cluster_name.has_value());
  EXPECT_EQ(c->batch_size, 8192u);
  EXPECT_EQ(c->batch_wait_ms, 5u);
  EXPECT_EQ(c->synchronous, AggregatorConfig::Synchronous::kFull);
  EXPECT_EQ(c->summary_wait, std::chrono::seconds(300));
  EXPECT_EQ(c->summary_wait, kDefaultSummaryWait);
}

TEST(AggregatorConfig, KeysAreRead) {
  auto c = parseAggregatorConfig(
      "Listen=ipc:///tmp/x\nDatabase=/tmp/e.db\nWriteComments=no\nClusterName=c1\n"
      "MaxFrameSize=16K\nBatchSize=100\nBatchWaitMs=0\nSynchronous=normal\n"
      "SummaryWaitSeconds=0\nCommentWritesPerSecond=5000\nCommentBatchSize=7\nCommentConnections="
      "3\n");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->listen, "ipc:///tmp/x");
  EXPECT_EQ(c->database, "/tmp/e.db");
  EXPECT_FALSE(c->write_comments);
  EXPECT_EQ(c->cluster_name, "c1");
  EXPECT_EQ(c->max_frame_bytes, 16384u);
  EXPECT_EQ(c->batch_size, 100u);
  EXPECT_EQ(c->batch_wait_ms, 0u);
  EXPECT_EQ(c->synchronous, AggregatorConfig::Synchronous::kNormal);
  EXPECT_EQ(c->summary_wait, std::chrono::seconds(0));
  EXPECT_EQ(c->comment_writes_per_second, 5000u);
  EXPECT_EQ(c->comment_batch_size, 7u);
  EXPECT_EQ(c->comment_connections, 3u);
}

TEST(AggregatorConfig, UnknownKeyIsNamedWithFileAndLine) {
  auto c = parseAggregatorConfig("Listen=tcp://*:1\nListenn=x\n", "agg.conf");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("agg.conf:2"), std::string::npos) << c.error().message();
  EXPECT_NE(c.error().message().find("Listenn"), std::string::npos);
}

TEST(AggregatorConfig, OversizedFrameLimitIsRefused) {
  EXPECT_FALSE(parseAggregatorConfig("MaxFrameSize=1M\n").ok());
}

TEST(AggregatorConfig, SummaryWaitIsBoundedToADay) {
  auto day = parseAggregatorConfig("SummaryWaitSeconds=86400\n");
  ASSERT_TRUE(day.ok()) << day.error().message();
  EXPECT_EQ(day->summary_wait, std::chrono::hours(24));
  EXPECT_FALSE(parseAggregatorConfig("SummaryWaitSeconds=86401\n").ok());
  EXPECT_FALSE(parseAggregatorConfig("SummaryWaitSeconds=5m\n").ok());
}

}  // namespace
}  // namespace accel::aggregator
