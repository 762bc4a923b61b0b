// Address planning: which addresses of the node's range a job gets, and the
// IPv4 edge cases of the range (network and broadcast, /31, /32, sub-blocks).
#include "accel/fabric/address_plan.h"

#include <gtest/gtest.h>

namespace accel::fabric {
namespace {

uint32_t ip(const char* text) { return *parseIpv4(text); }

std::vector<std::string> plan(const AddressPool& pool, uint32_t job, size_t count,
                              const std::vector<uint32_t>& in_use = {}) {
  auto planned = planAddresses(pool, job, count, in_use);
  EXPECT_TRUE(planned.ok()) << planned.error().message();
  std::vector<std::string> out;
  if (planned.ok()) {
    for (const auto& c : *planned) out.push_back(formatCidr(c));
  }
  return out;
}

TEST(FabricAddressPlan, SlashTwentyFourSkipsNetworkAndBroadcast) {
  auto pool = makeAddressPool("10.9.0.0/24");
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool->first, ip("10.9.0.1"));
  EXPECT_EQ(pool->size, 254u);
  EXPECT_EQ(pool->subnet_length, 24);
  EXPECT_EQ(plan(*pool, 0, 1), std::vector<std::string>{"10.9.0.1/24"});
  EXPECT_EQ(plan(*pool, 5, 1), std::vector<std::string>{"10.9.0.6/24"});
  EXPECT_EQ(plan(*pool, 253, 1), std::vector<std::string>{"10.9.0.254/24"});
  EXPECT_EQ(plan(*pool, 254, 1), std::vector<std::string>{"10.9.0.1/24"});  // wraps
  // (2^32 - 1) % 254 = 15: the largest job id still lands inside.
  EXPECT_EQ(plan(*pool, 4294967295u, 1), std::vector<std::string>{"10.9.0.16/24"});
}

TEST(FabricAddressPlan, SameJobSameAddressesAndSeveralPerJob) {
  auto pool = *makeAddressPool("10.9.0.0/24");
  EXPECT_EQ(plan(pool, 42, 3), plan(pool, 42, 3));
  EXPECT_EQ(plan(pool, 42, 3),
            (std::vector<std::string>{"10.9.0.43/24", "10.9.0.44/24", "10.9.0.45/24"}));
  // The last slot wraps to the first address, never to .0 or .255.
  EXPECT_EQ(plan(pool, 253, 2), (std::vector<std::string>{"10.9.0.254/24", "10.9.0.1/24"}));
  EXPECT_TRUE(plan(pool, 7, 0).empty());
}

TEST(FabricAddressPlan, SkipsAddressesInUse) {
  auto pool = *makeAddressPool("10.9.0.0/24");
  const std::vector<uint32_t> in_use = {ip("10.9.0.43"), ip("10.9.0.45"), ip("192.168.1.1")};
  EXPECT_EQ(plan(pool, 42, 2, in_use), (std::vector<std::string>{"10.9.0.44/24", "10.9.0.46/24"}));
}

TEST(FabricAddressPlan, FullRangeIsAConflict) {
  auto pool = *makeAddressPool("10.9.0.4/30");  // .5 and .6
  EXPECT_EQ(pool.size, 2u);
  auto planned = planAddresses(pool, 1, 2, {ip("10.9.0.5")});
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.error().code(), ErrorCode::kConflict);
  EXPECT_EQ(planned.error().message(),
            "no free address in 10.9.0.4/30 for job 1 (2 needed, 1 free)");
}

TEST(FabricAddressPlan, PointToPointAndHostRanges) {
  auto p31 = *makeAddressPool("10.9.0.0/31");  // RFC 3021: both usable
  EXPECT_EQ(p31.first, ip("10.9.0.0"));
  EXPECT_EQ(p31.size, 2u);
  EXPECT_EQ(plan(p31, 1, 2), (std::vector<std::string>{"10.9.0.1/31", "10.9.0.0/31"}));
  auto p32 = *makeAddressPool("10.9.0.9/32");
  EXPECT_EQ(plan(p32, 12345, 1), std::vector<std::string>{"10.9.0.9/32"});
  // A one-address block inside a /24 subnet is fine unless it is the
  // subnet's network or broadcast address.
  EXPECT_EQ(plan(*makeAddressPool("10.9.0.7/32", 24), 0, 1),
            std::vector<std::string>{"10.9.0.7/24"});
  for (const char* edge : {"10.9.0.0/32", "10.9.0.255/32"}) {
    auto pool = makeAddressPool(edge, 24);
    ASSERT_FALSE(pool.ok()) << edge;
    EXPECT_EQ(pool.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(pool.error().message().find("no usable address"), std::string::npos);
  }
}

TEST(FabricAddressPlan, NodeBlocksOfALargerSubnet) {
  // A middle block holds neither the subnet's network nor its broadcast.
  auto middle = *makeAddressPool("10.9.3.64/26", 16);
  EXPECT_EQ(middle.first, ip("10.9.3.64"));
  EXPECT_EQ(middle.size, 64u);
  EXPECT_EQ(plan(middle, 0, 1), std::vector<std::string>{"10.9.3.64/16"});
  auto low = *makeAddressPool("10.9.0.0/26", 16);
  EXPECT_EQ(low.first, ip("10.9.0.1"));
  EXPECT_EQ(low.size, 63u);
  auto high = *makeAddressPool("10.9.255.192/26", 16);
  EXPECT_EQ(high.first, ip("10.9.255.192"));
  EXPECT_EQ(high.size, 63u);
  EXPECT_EQ(plan(high, 62, 1), std::vector<std::string>{"10.9.255.254/16"});
}

TEST(FabricAddressPlan, RefusesBadRanges) {
  for (const char* text : {"10.9.0.1/24", "10.9.0.0", "10.9.0.0/33", "", "banana"}) {
    auto pool = makeAddressPool(text);
    ASSERT_FALSE(pool.ok()) << text;
    EXPECT_EQ(pool.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(pool.error().message().rfind("address range: ", 0), 0u) << pool.error().message();
  }
  auto narrower = makeAddressPool("10.9.0.0/24", 25);
  ASSERT_FALSE(narrower.ok());
  EXPECT_EQ(narrower.error().message(), "address range 10.9.0.0/24 does not fit in a /25 subnet");
}

TEST(FabricAddressPlan, WholeSpaceIsBoundedByWhatIsTaken) {
  auto all = *makeAddressPool("0.0.0.0/0");
  EXPECT_EQ(all.first, 1u);
  EXPECT_EQ(all.size, 4294967294u);
  EXPECT_EQ(plan(all, 9, 2, {10, 11}), (std::vector<std::string>{"0.0.0.12/0", "0.0.0.13/0"}));
}

}  // namespace
}  // namespace accel::fabric
