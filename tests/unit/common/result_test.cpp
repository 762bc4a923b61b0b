#include "accel/common/result.h"

#include <gtest/gtest.h>

namespace accel {
namespace {

Result<int> half(int v) {
  if (v % 2 != 0) return Error(ErrorCode::kInvalidArgument, std::to_string(v) + " is odd");
  return v / 2;
}

Result<int> quarter(int v) {
  auto h = half(v);
  ACCEL_TRY(h);
  return half(*h);
}

TEST(ResultTest, HoldsValueOrError) {
  auto r = half(8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 4);
  auto e = half(3);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(e.error().message(), "3 is odd");
}

TEST(ResultTest, TryPropagatesTheFirstFailure) {
  EXPECT_EQ(*quarter(8), 2);
  auto r = quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "3 is odd");
}

TEST(ResultTest, ContextPrefixesOutermostFirst) {
  Error e(ErrorCode::kIo, "disk full");
  EXPECT_EQ(e.context("spool").context("outbox").message(), "outbox: spool: disk full");
}

TEST(ResultTest, SysErrorMapsErrno) {
  EXPECT_EQ(sysError("open /x", ENOENT).code(), ErrorCode::kNotFound);
  EXPECT_EQ(sysError("open /x", EACCES).code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(sysError("open /x", EIO).code(), ErrorCode::kIo);
  EXPECT_NE(sysError("open /x", ENOENT).message().find("/x"), std::string::npos);
}

TEST(ResultDeathTest, ValueOfFailureAborts) {
  auto r = half(1);
  EXPECT_DEATH({ (void)r.value(); }, "failed Result");
}

}  // namespace
}  // namespace accel
