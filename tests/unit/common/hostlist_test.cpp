#include "accel/common/hostlist.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace accel {
namespace {

using Names = std::vector<std::string>;

Names expand(std::string_view list) {
  auto r = expandHostlist(list);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : Names{};
}

TEST(HostlistTest, ExpandsRangesListsAndPlainNames) {
  EXPECT_EQ(expand(""), Names{});
  EXPECT_EQ(expand("login1"), (Names{"login1"}));
  EXPECT_EQ(expand("sbn[1-3]"), (Names{"sbn1", "sbn2", "sbn3"}));
  EXPECT_EQ(expand("n[1,3-4],gpu7"), (Names{"n1", "n3", "n4", "gpu7"}));
  EXPECT_EQ(expand("a[2]b,c"), (Names{"a2b", "c"}));
}

TEST(HostlistTest, KeepsZeroPaddingAcrossADigitBoundary) {
  EXPECT_EQ(expand("ipu[08-10]"), (Names{"ipu08", "ipu09", "ipu10"}));
  EXPECT_EQ(expand("r[098-100]x"), (Names{"r098x", "r099x", "r100x"}));
}

TEST(HostlistTest, RefusesMalformedLists) {
  for (const char* bad : {"n[1-3", "n1-3]", "n[[1]]", "n[]", "n[3-1]", "n[a-b]", "n[1-]",
                          "n[1]x[2]", "n[1234567890]"}) {
    auto r = expandHostlist(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().message().find("host list"), std::string::npos) << bad;
    }
  }
}

TEST(HostlistTest, RefusesAListThatWouldExpandWithoutBound) {
  auto r = expandHostlist("n[0-999999999]");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("more than"), std::string::npos);
}

TEST(HostlistTest, FirstHostReadsOnlyTheFirstName) {
  auto a = firstHost("sbn[2-3],sbn1");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, "sbn2");
  // The rest is not expanded, so a huge range after the first name costs nothing.
  auto b = firstHost("n[007-999999999]");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, "n007");
  auto c = firstHost("single");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, "single");
  EXPECT_FALSE(firstHost("").ok());
  EXPECT_FALSE(firstHost("n[x]").ok());
  EXPECT_FALSE(firstHost("n[1").ok());
}

TEST(HostlistTest, CountAgreesWithTheExpansionWithoutMakingIt) {
  for (const char* list :
       {"", "a", "a,b,a", "n[1-3]", "n[08-10],m[1,3-4]x", "r[0-2]s,t[5]", "n[00000-65535]"}) {
    auto names = expandHostlist(list);
    auto count = countHostlist(list);
    ASSERT_TRUE(names.ok()) << list;
    ASSERT_TRUE(count.ok()) << list;
    EXPECT_EQ(*count, names->size()) << list;
  }
  // The same refusals, the bound included: one name past it, in one range or over several.
  for (const char* list : {"n[0-65536]", "n[0-999999999]", "n[1-65535]x,m[1-2]", "n[x]", "n[3-1]",
                           "n[1", "n[1]x[2]"}) {
    EXPECT_FALSE(countHostlist(list).ok()) << list;
    EXPECT_FALSE(expandHostlist(list).ok()) << list;
  }
  auto full = countHostlist("a,n[1-65535]");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(*full, kMaxHostlistNames);
}

}  // namespace
}  // namespace accel
