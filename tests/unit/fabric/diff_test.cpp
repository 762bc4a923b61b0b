// The changes set-up and teardown make, and the read-back comparison.
#include "accel/fabric/diff.h"

#include <gtest/gtest.h>

namespace accel::fabric {
namespace {

LinkInfo link(uint32_t mtu, bool up, bool promote) { return {"eth3", 7, mtu, up, promote}; }

Ipv4Cidr cidr(const char* text) { return *parseCidr(text); }

TEST(FabricDiff, ChangeTowardSetsOnlyWhatDiffers) {
  NicTarget target;
  target.mtu = 9000;
  auto change = changeToward(target, link(1500, false, false));
  EXPECT_EQ(change.mtu, 9000u);
  EXPECT_EQ(change.up, true);
  EXPECT_EQ(change.promote_secondaries, true);
  EXPECT_TRUE(changeToward(target, link(9000, true, true)).empty());
  // Without a configured MTU the MTU is never touched.
  auto no_mtu = changeToward(NicTarget{}, link(1500, true, false));
  EXPECT_FALSE(no_mtu.mtu.has_value());
  EXPECT_FALSE(no_mtu.up.has_value());
  EXPECT_EQ(no_mtu.promote_secondaries, true);
}

TEST(FabricDiff, RestorePutsBackTheRecordedState) {
  LedgerNic original{"eth3", 7, 1500, false, false, {}};
  auto change = changeToRestore(original, link(9000, true, true));
  EXPECT_EQ(change.mtu, 1500u);
  EXPECT_EQ(change.up, false);
  EXPECT_EQ(change.promote_secondaries, false);
  EXPECT_TRUE(changeToRestore(original, link(1500, false, false)).empty());
  LedgerNic was_up{"eth3", 7, 9000, true, false, {}};
  auto partial = changeToRestore(was_up, link(9000, true, true));
  EXPECT_FALSE(partial.mtu.has_value());
  EXPECT_FALSE(partial.up.has_value());
  EXPECT_EQ(partial.promote_secondaries, false);
}

TEST(FabricDiff, ReadBackMatches) {
  NicTarget target{9000, {cidr("10.9.0.5/24")}, {cidr("10.10.0.0/16")}};
  std::vector<AddressEntry> addresses = {
      {3, cidr("10.9.0.5/24")}, {7, cidr("10.9.0.5/24")}, {7, cidr("10.9.0.6/24")}};
  std::vector<RouteEntry> routes = {{7, cidr("10.10.0.0/16")}, {7, cidr("10.9.0.0/24")}};
  EXPECT_TRUE(diffNic(target, link(9000, true, true), addresses, routes).empty());
}

TEST(FabricDiff, ReadBackNamesEachDifference) {
  NicTarget target{9000, {cidr("10.9.0.5/24")}, {cidr("10.10.0.0/16")}};
  // The address with another prefix, and on another link, does not count;
  // neither does the route through another link.
  std::vector<AddressEntry> addresses = {{7, cidr("10.9.0.5/16")}, {3, cidr("10.9.0.5/24")}};
  std::vector<RouteEntry> routes = {{3, cidr("10.10.0.0/16")}};
  EXPECT_EQ(diffNic(target, link(1500, false, false), addresses, routes),
            (std::vector<std::string>{
                "mtu 1500, want 9000", "link down, want up", "promote_secondaries off, want on",
                "address 10.9.0.5/24 missing", "route 10.10.0.0/16 missing"}));
}

}  // namespace
}  // namespace accel::fabric
