// Strict IPv4 text: what the configuration and the ledger may contain.
#include "accel/fabric/ipv4.h"

#include <gtest/gtest.h>

namespace accel::fabric {
namespace {

TEST(FabricIpv4, ParsesDottedQuads) {
  EXPECT_EQ(*parseIpv4("10.9.0.5"), 0x0a090005u);
  EXPECT_EQ(*parseIpv4("0.0.0.0"), 0u);
  EXPECT_EQ(*parseIpv4("255.255.255.255"), 0xffffffffu);
}

TEST(FabricIpv4, RefusesAnythingElse) {
  for (const char* text :
       {"", "10.9.0", "10.9.0.5.1", "10..0.5", "256.0.0.1", "010.9.0.5", "10.9.0.5 ", " 10.9.0.5",
        "+1.2.3.4", "1.2.3.-4", "a.b.c.d", "1.2.3.4/", "1234.1.1.1", "10.9.0.5."}) {
    auto parsed = parseIpv4(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message().find(std::string("'") + text + "'"), std::string::npos);
  }
}

TEST(FabricIpv4, ParsesPrefixes) {
  auto cidr = parseCidr("10.9.0.5/24");
  ASSERT_TRUE(cidr.ok());
  EXPECT_EQ(cidr->address, 0x0a090005u);
  EXPECT_EQ(cidr->length, 24);
  EXPECT_EQ(cidr->network(), 0x0a090000u);
  EXPECT_EQ(cidr->broadcast(), 0x0a0900ffu);
  EXPECT_FALSE(cidr->isNetwork());
  EXPECT_TRUE(cidr->contains(0x0a0900feu));
  EXPECT_FALSE(cidr->contains(0x0a090100u));
  auto all = parseCidr("0.0.0.0/0");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->mask(), 0u);
  EXPECT_TRUE(all->contains(0xdeadbeefu));
  auto host = parseCidr("10.9.0.5/32");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->mask(), 0xffffffffu);
  EXPECT_TRUE(host->isNetwork());
  for (const char* text : {"10.9.0.0", "10.9.0.0/", "10.9.0.0/33", "10.9.0.0/08", "10.9.0.0/2a",
                           "10.9.0.0/-1", "10.9.0.0/24/1", "/24", "10.9.0.0/100"}) {
    EXPECT_FALSE(parseCidr(text).ok()) << text;
  }
}

TEST(FabricIpv4, NetworksHaveNoHostBits) {
  EXPECT_TRUE(parseNetwork("10.9.0.0/24").ok());
  EXPECT_TRUE(parseNetwork("10.9.0.1/32").ok());
  auto bad = parseNetwork("10.9.0.1/24");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "'10.9.0.1/24' has host bits set; the network is 10.9.0.0/24");
}

TEST(FabricIpv4, FormatsWhatItParses) {
  for (const char* text : {"10.9.0.5/24", "0.0.0.0/0", "255.255.255.255/32", "192.168.100.1/31"}) {
    EXPECT_EQ(formatCidr(*parseCidr(text)), text);
  }
  EXPECT_EQ(formatIpv4(0x7f000001u), "127.0.0.1");
}

}  // namespace
}  // namespace accel::fabric
