// The accel= segment of AdminComment is replaced; everything else is kept.
#include "accel/ipc/admin_comment.h"

#include <gtest/gtest.h>

namespace accel::ipc {
namespace {

const std::string kJson = R"({"v":1,"result":"ok"})";

TEST(AdminComment, EmptyCommentGetsOurSegmentOnly) {
  EXPECT_EQ(mergeAdminComment("", kJson), "accel=" + kJson);
}

TEST(AdminComment, JobstatsSummaryIsKept) {
  EXPECT_EQ(mergeAdminComment("JS1:H4sIAAAA+w==", kJson), "JS1:H4sIAAAA+w==;accel=" + kJson);
}

TEST(AdminComment, OurOldSegmentIsReplacedInPlace) {
  std::string old = R"(JS1:abc;accel={"v":1,"result":"failed","nodes":["a;b","c}"]};other=1)";
  EXPECT_EQ(mergeAdminComment(old, kJson), "JS1:abc;accel=" + kJson + ";other=1");
}

TEST(AdminComment, ReplacingTwiceIsStable) {
  std::string once = mergeAdminComment("JS1:abc", kJson);
  EXPECT_EQ(mergeAdminComment(once, kJson), once);
}

TEST(AdminComment, AccelInsideSomebodyElsesTextIsNotOurs) {
  std::string other = "note: accel={x}";  // not at a segment start
  EXPECT_EQ(mergeAdminComment(other, kJson), other + ";accel=" + kJson);
}

TEST(AdminComment, UnclosedSegmentIsReplacedToTheEnd) {
  EXPECT_EQ(mergeAdminComment(R"(JS1:x;accel={"v":1,"res)", kJson), "JS1:x;accel=" + kJson);
}

TEST(AdminComment, ExtractFindsOurJsonOnly) {
  EXPECT_EQ(extractAccelSegment("JS1:x;accel=" + kJson + ";y=2"), kJson);
  EXPECT_EQ(extractAccelSegment("JS1:x"), "");
}

}  // namespace
}  // namespace accel::ipc
