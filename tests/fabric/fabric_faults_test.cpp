// Faults during set-up: each one fails the call with a message naming the
// interface and the reason, and leaves the namespace as it was.
#include <fstream>

#include "netns_fixture.h"

namespace accel::fabric::testing {
namespace {

// A full set-up of one job on two NICs makes six changes: link, address and
// route on each NIC, in that order.
constexpr int kSetUpChanges = 6;
const std::vector<std::string> kTwoNics = {"hsi0", "ibs2f1"};

TEST_F(NetnsTest, MissingInterface) {
  auto m = manager(config());
  ASSERT_NE(m, nullptr);
  auto job = m->setUp(42, {"hsi0", "eth9"});
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(job.error().message(), "fabric: eth9: no such interface");
  EXPECT_TRUE(m->jobs().empty());
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, NetlinkRefusesAChange) {
  // A macvlan's MTU may not exceed its lower link's (1500 here): the kernel
  // refuses 9000 after hsi0 is already set up, which must be undone.
  run("ip link add roce0 link p3 type macvlan");
  const std::string before = snapshot();
  auto m = manager(config());
  ASSERT_NE(m, nullptr);
  auto job = m->setUp(42, {"hsi0", "roce0"});
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().code(), ErrorCode::kIo);
  EXPECT_EQ(job.error().message().rfind("fabric: roce0: set link: netlink: ", 0), 0u)
      << job.error().message();
  EXPECT_TRUE(m->jobs().empty());
  EXPECT_EQ(snapshot(), before);
}

TEST_F(NetnsTest, FailureAtEachChangeIsRolledBack) {
  for (int call = 1; call <= kSetUpChanges; ++call) {
    SCOPED_TRACE("failing change " + std::to_string(call));
    auto m = manager(config(), std::make_unique<FaultyLinks>(links(), failAt({call})));
    ASSERT_NE(m, nullptr);
    auto job = m->setUp(42, kTwoNics);
    ASSERT_FALSE(job.ok());
    EXPECT_EQ(job.error().code(), ErrorCode::kIo);
    EXPECT_NE(job.error().message().find("injected failure at call " + std::to_string(call)),
              std::string::npos)
        << job.error().message();
    EXPECT_EQ(job.error().message().find("undo incomplete"), std::string::npos);
    EXPECT_TRUE(m->jobs().empty());
    EXPECT_EQ(snapshot(), before_);
  }
  // Past the last change nothing fails: the count above covers every change.
  auto m = manager(config(), std::make_unique<FaultyLinks>(links(), failAt({kSetUpChanges + 1})));
  ASSERT_TRUE(m->setUp(42, kTwoNics).ok());
  // ... and the next change is the first of the teardown, which fails and
  // keeps the job for a retry.
  auto failed = m->tearDown(42);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message(), "fabric: hsi0: injected failure at call 7");
  EXPECT_EQ(m->jobs(), std::vector<uint32_t>{42});
  ASSERT_TRUE(m->tearDown(42).ok());
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, FailedUndoIsLeftForTeardown) {
  // Change 3 (the route on hsi0) fails, and so
  // does the undo's first change.
  auto m = manager(config(), std::make_unique<FaultyLinks>(links(), failAt({3, 4})));
  ASSERT_NE(m, nullptr);
  auto job = m->setUp(42, kTwoNics);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(
      job.error().message().find("; undo incomplete: fabric: hsi0: injected failure at call 4"),
      std::string::npos)
      << job.error().message();
  m.reset();
  auto retry = manager(config());
  ASSERT_NE(retry, nullptr);
  EXPECT_EQ(retry->jobs(), std::vector<uint32_t>{42});
  ASSERT_TRUE(retry->tearDown(42).ok());
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, AddressTakenBySomeoneElse) {
  auto other = links();
  const int hsi0 = ifindex("hsi0");
  // Just before the job's address goes on hsi0 (change 2), someone else puts
  // the same address there.
  auto hook = [&](int call) -> std::optional<Status> {
    if (call == 2) {
      EXPECT_TRUE(other->addAddress(hsi0, *parseCidr("10.9.0.43/24")).ok());
    }
    return std::nullopt;
  };
  auto m = manager(config(), std::make_unique<FaultyLinks>(links(), hook));
  ASSERT_NE(m, nullptr);
  auto job = m->setUp(42, {"hsi0"});
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().code(), ErrorCode::kConflict);
  EXPECT_EQ(job.error().message(), "fabric: hsi0: address 10.9.0.43/24 already present (not ours)");
  EXPECT_TRUE(m->jobs().empty());
  // The other owner's address survives the rollback; the rest is undone.
  EXPECT_NE(run("ip -j addr show hsi0").find("\"10.9.0.43\""), std::string::npos);
  EXPECT_TRUE(other->removeAddress(hsi0, *parseCidr("10.9.0.43/24")).ok());
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, ReadBackCatchesAChangeThatDidNotHappen) {
  // The link change "succeeds" without reaching the kernel.
  auto m = manager(config(), std::make_unique<FaultyLinks>(links(), [](int call) {
                     return call == 1 ? std::optional<Status>(okStatus()) : std::nullopt;
                   }));
  ASSERT_NE(m, nullptr);
  auto job = m->setUp(42, {"hsi0"});
  ASSERT_FALSE(job.ok());
  // The kernel refuses the route through a down link before the check.
  EXPECT_EQ(job.error().message().rfind("fabric: hsi0: netlink: ", 0), 0u) << job.error().message();
  m.reset();
  FabricConfig c = config();
  c.routes.clear();
  auto quiet = manager(c, std::make_unique<FaultyLinks>(links(), [](int call) {
                         return call == 1 ? std::optional<Status>(okStatus()) : std::nullopt;
                       }));
  ASSERT_NE(quiet, nullptr);
  job = quiet->setUp(42, {"hsi0"});
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().code(), ErrorCode::kIo);
  EXPECT_EQ(job.error().message(),
            "fabric: hsi0: verify: mtu 1500, want 9000; link down, want up; "
            "promote_secondaries off, want on");
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, RangeExhausted) {
  FabricConfig c = config();
  c.address_range = "10.9.0.4/30";
  auto m = manager(c);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(m->setUp(1, {"hsi0"}).ok());
  ASSERT_TRUE(m->setUp(2, {"hsi0"}).ok());
  auto third = m->setUp(3, {"ibs2f1"});
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().code(), ErrorCode::kConflict);
  EXPECT_EQ(third.error().message(),
            "fabric: no free address in 10.9.0.4/30 for job 3 (1 needed, 0 free)");
  ASSERT_TRUE(m->tearDown(2).ok());
  ASSERT_TRUE(m->tearDown(1).ok());
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, BadConfigurationAndBadNames) {
  auto refused = [&](FabricConfig c, const std::string& message) {
    auto m = FabricManager::open(c, links());
    ASSERT_FALSE(m.ok()) << message;
    EXPECT_EQ(m.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(m.error().message(), message);
  };
  FabricConfig c = config();
  c.mtu = 20;
  refused(c, "fabric: configuration: mtu 20 is not in 68..65535");
  c = config();
  c.address_range = "10.9.0.1/24";
  refused(c,
          "fabric: configuration: address range: '10.9.0.1/24' has host bits set; the "
          "network is 10.9.0.0/24");
  c = config();
  c.routes = {"10.10.0.0/16", "10.11.0.0"};
  refused(c, "fabric: configuration: route: '10.11.0.0' is not an IPv4 prefix (a.b.c.d/n)");
  c = config();
  c.state_dir = "relative/dir";
  refused(c, "fabric: configuration: state directory 'relative/dir' is not an absolute path");
  auto m = manager(config());
  ASSERT_NE(m, nullptr);
  for (const auto& nics : std::vector<std::vector<std::string>>{
           {"hsi0", "hsi0"}, {"a/b"}, {""}, {"a-name-far-too-long"}}) {
    auto job = m->setUp(1, nics);
    ASSERT_FALSE(job.ok());
    EXPECT_EQ(job.error().code(), ErrorCode::kInvalidArgument) << job.error().message();
  }
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, CorruptLedgerIsRefused) {
  { auto m = manager(config()); }  // makes the state directory
  std::ofstream(state_dir_ + "/fabric.json") << "{\"version\":1,\"nics\":[";
  auto m = FabricManager::open(config(), links());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code(), ErrorCode::kParse);
  EXPECT_EQ(
      m.error().message(),
      "fabric: " + state_dir_ + "/fabric.json: fabric ledger: not JSON (garbage or truncated)");
}

}  // namespace
}  // namespace accel::fabric::testing
