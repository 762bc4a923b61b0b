// accel.conf's link keys reach the outbox as written, with their defaults
// when left out.
#include "accel/agentd/outbox_options.h"

#include <gtest/gtest.h>

#include "accel/common/config.h"

namespace accel::agentd {
namespace {

TEST(OutboxOptionsTest, LinkKeysOfAccelConfReachTheOutbox) {
  auto config = parseAccelConfig(
      "AggregatorReconnectMinMs=40\nAggregatorReconnectMaxMs=9000\nAggregatorPingInterval=3\n"
      "AggregatorPingTimeout=7\nAggregatorTcpKeepAlive=0\n");
  ASSERT_TRUE(config.ok()) << config.error().message();
  auto o = outboxOptionsFrom(*config, "n1");
  ASSERT_TRUE(o.ok()) << o.error().message();
  EXPECT_EQ(o->reconnect_min.count(), 40);
  EXPECT_EQ(o->reconnect_max.count(), 9000);
  EXPECT_EQ(o->ping_interval.count(), 3000);
  EXPECT_EQ(o->ping_timeout.count(), 7000);
  EXPECT_EQ(o->tcp_keepalive.count(), 0);
}

TEST(OutboxOptionsTest, LeftOutLinkKeysTakeTheirDocumentedDefaults) {
  auto config = parseAccelConfig("");
  ASSERT_TRUE(config.ok()) << config.error().message();
  auto o = outboxOptionsFrom(*config, "n1");
  ASSERT_TRUE(o.ok()) << o.error().message();
  EXPECT_EQ(o->reconnect_min.count(), 500);
  EXPECT_EQ(o->reconnect_max.count(), 30000);
  EXPECT_EQ(o->ping_interval.count(), 10000);
  EXPECT_EQ(o->ping_timeout.count(), 30000);
  EXPECT_EQ(o->tcp_keepalive.count(), 60);
}

}  // namespace
}  // namespace accel::agentd
