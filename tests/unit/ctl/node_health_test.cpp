#include "accel/agentd/node_health.h"

#include <gtest/gtest.h>

#include "fake_appliance.h"
#include "fake_clock.h"

namespace accel::agentd {
namespace {

// A controller whose every answer is chosen by the test.
class FakeController : public ipu::PartitionController {
 public:
  Status next = okStatus();
  Status create(const ipu::PartitionSpec&) override { return next; }
  Status remove(const std::string&) override { return next; }
  Result<std::vector<ipu::GcdConfig>> ipuofConfigs(const std::string&) override {
    if (!next.ok()) return next.error();
    return std::vector<ipu::GcdConfig>{};
  }
  std::string describe() const override { return "vipu at 10.1.2.3:8090"; }
};

TEST(NodeHealthTest, ControllersAreListedBeforeTheirFirstCallAndCountCalls) {
  support::FakeClock clock(1000);
  auto health = std::make_shared<NodeHealth>(clock);
  auto fake = std::make_shared<FakeController>();
  auto vipu = watchCalls(std::shared_ptr<ipu::PartitionController>(fake), health);
  auto s = health->snapshot();
  ASSERT_EQ(s.controllers.size(), 1u);
  EXPECT_EQ(s.controllers[0].name, "vipu");
  EXPECT_EQ(s.controllers[0].client, "vipu at 10.1.2.3:8090");
  EXPECT_EQ(s.controllers[0].calls, 0u);

  clock.advanceTo(2000);
  ASSERT_TRUE(vipu->create({.name = "p42", .ipus = 2}).ok());
  clock.advanceTo(3000);
  fake->next = Error(ErrorCode::kUnavailable, "connection refused");
  EXPECT_FALSE(vipu->remove("p42").ok());
  auto c = health->snapshot().controllers[0];
  EXPECT_EQ(c.call, "remove p42");
  EXPECT_EQ(c.at_ns, 3000);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.error, "connection refused");
  EXPECT_EQ(c.last_ok_ns, 2000);
  EXPECT_EQ(c.calls, 2u);
  EXPECT_EQ(c.failures, 1u);
}

// "No such partition" is the controller answering: it was reached.
TEST(NodeHealthTest, NotFoundFromTheControllerCountsAsReached) {
  auto health = std::make_shared<NodeHealth>();
  auto fake = std::make_shared<FakeController>();
  auto vipu = watchCalls(std::shared_ptr<ipu::PartitionController>(fake), health);
  fake->next = Error(ErrorCode::kNotFound, "no partition p7");
  EXPECT_FALSE(vipu->ipuofConfigs("p7").ok());  // the caller still sees the error
  auto c = health->snapshot().controllers[0];
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.call, "get p7");
  EXPECT_GT(c.at_ns, 0);  // the default clock is the real one
}

TEST(NodeHealthTest, ApplianceCallsAreNoted) {
  auto health = std::make_shared<NodeHealth>();
  auto fake = std::make_shared<appliance::FakeAppliance>("csctl");
  fake->down = true;
  fake->down_error = Error(ErrorCode::kTimeout, "csctl timed out after 5 s");
  auto csctl = watchCalls(std::shared_ptr<appliance::ApplianceClient>(fake), health);
  EXPECT_FALSE(csctl->jobs().ok());
  auto c = health->snapshot().controllers[0];
  EXPECT_EQ(c.name, "appliance");
  EXPECT_EQ(c.call, "get jobs");
  EXPECT_EQ(c.error, "csctl timed out after 5 s");
  EXPECT_EQ(c.last_ok_ns, 0);
}

TEST(NodeHealthTest, NoClientNoWatcher) {
  auto health = std::make_shared<NodeHealth>();
  EXPECT_EQ(watchCalls(std::shared_ptr<ipu::PartitionController>(), health), nullptr);
  EXPECT_TRUE(health->snapshot().controllers.empty());
}

TEST(NodeHealthTest, KeepsTheNewestErrorsWithTheirTime) {
  support::FakeClock clock(1000);
  NodeHealth health(clock);
  for (int i = 0; i < 15; ++i) {
    clock.advanceTo(100 + i);
    health.nodeFault("fault " + std::to_string(i));
  }
  auto e = health.snapshot().errors;
  ASSERT_EQ(e.size(), NodeHealth::kMaxErrors);
  EXPECT_EQ(e.front().message, "fault 5");
  EXPECT_EQ(e.back().message, "fault 14");
  EXPECT_EQ(e.back().at_ns, 114);
}

TEST(NodeHealthTest, RefusedReloadIsKeptUntilOneIsApplied) {
  support::FakeClock clock(1000);
  NodeHealth health(clock);
  health.configLoaded();
  clock.advanceTo(5000);
  health.configRefused("config not changed: accel.conf:3: key 'Foo': unknown key");
  auto s = health.snapshot();
  EXPECT_EQ(s.config_loaded_ns, 1000);
  EXPECT_EQ(s.config_error, "config not changed: accel.conf:3: key 'Foo': unknown key");
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0].message,
            "reload: config not changed: accel.conf:3: key 'Foo': unknown key");
  clock.advanceTo(6000);
  health.configLoaded();
  s = health.snapshot();
  EXPECT_EQ(s.config_loaded_ns, 6000);
  EXPECT_EQ(s.config_error, "");
}

}  // namespace
}  // namespace accel::agentd
