#include "accel/common/text.h"

#include <gtest/gtest.h>

#include <string>

namespace accel {
namespace {

TEST(CleanTextTest, AcceptsAsciiAndUtf8) {
  EXPECT_TRUE(isCleanText(""));
  EXPECT_TRUE(isCleanText("alice"));
  EXPECT_TRUE(isCleanText("gpu-part_1.x"));
  EXPECT_TRUE(isCleanText("J\xc3\xb6rg"));               // ö
  EXPECT_TRUE(isCleanText("\xe6\x97\xa5\xe6\x9c\xac"));  // 日本
  EXPECT_TRUE(isCleanText("\xf0\x9f\x98\x80"));          // an emoji, 4 bytes
}

TEST(CleanTextTest, RefusesControlBytesBadUtf8AndLength) {
  EXPECT_FALSE(isCleanText("a\nb"));
  EXPECT_FALSE(isCleanText(std::string("a\0b", 3)));
  EXPECT_FALSE(isCleanText("del\x7f"));
  EXPECT_FALSE(isCleanText("\x9c"));              // lone continuation byte
  EXPECT_FALSE(isCleanText("\xc3"));              // truncated sequence
  EXPECT_FALSE(isCleanText("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(isCleanText("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(isCleanText("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(isCleanText(std::string(257, 'a')));
  EXPECT_TRUE(isCleanText(std::string(300, 'a'), 300));
}

}  // namespace
}  // namespace accel
