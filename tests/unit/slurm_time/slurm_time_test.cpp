// Slurm's time notation: every accepted form, every rejected shape, the
// 32-bit ceiling, and formatting back.
#include "accel/common/slurm_time.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "accel/common/config_errors.h"

namespace accel {
namespace {

SlurmDuration secs(std::int64_t n) { return SlurmDuration::fromSeconds(n); }

struct ValidCase {
  std::string text;
  SlurmDuration expected;
};

struct InvalidCase {
  std::string text;
  std::string reason;  // the part in parentheses of the message
};

// ctest names parameterized tests after the printed parameter, so it must be
// stable (no addresses) and printable (control bytes escaped).
void PrintTo(const ValidCase& c, std::ostream* os) { *os << quoteForMessage(c.text); }
void PrintTo(const InvalidCase& c, std::ostream* os) { *os << quoteForMessage(c.text); }

class SlurmTimeValid : public ::testing::TestWithParam<ValidCase> {};

TEST_P(SlurmTimeValid, Parses) {
  Result<SlurmDuration> parsed = parseSlurmTime(GetParam().text);
  ASSERT_TRUE(parsed.ok()) << GetParam().text << ": " << parsed.error().message();
  EXPECT_EQ(*parsed, GetParam().expected) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(Forms, SlurmTimeValid,
                         ::testing::Values(
                             // MM: a bare number is minutes, as in sbatch --time.
                             ValidCase{"0", secs(0)}, ValidCase{"1", secs(60)},
                             ValidCase{"90", secs(5400)}, ValidCase{"007", secs(420)},
                             // MM:SS
                             ValidCase{"1:30", secs(90)}, ValidCase{"00:30", secs(30)},
                             // HH:MM:SS
                             ValidCase{"00:30:00", secs(1800)}, ValidCase{"1:00:00", secs(3600)},
                             ValidCase{"23:59:59", secs(86399)},
                             ValidCase{"48:00:00", secs(172800)},
                             // D-HH, D-HH:MM, D-HH:MM:SS
                             ValidCase{"1-0", secs(86400)}, ValidCase{"4-12", secs(388800)},
                             ValidCase{"2-02:30", secs(181800)},
                             ValidCase{"4-12:15:30", secs(389730)},
                             ValidCase{"0-00:00:01", secs(1)},
                             // Fields after the first are not range-checked, as in Slurm.
                             ValidCase{"0:90", secs(90)}, ValidCase{"1:75:00", secs(8100)},
                             ValidCase{"1-30", secs(194400)}, ValidCase{"0-0:0:120", secs(120)},
                             // The ceiling itself, in three spellings.
                             ValidCase{"24855-03:14:07", secs(kMaxSlurmTimeSeconds)},
                             ValidCase{"596523:14:07", secs(kMaxSlurmTimeSeconds)},
                             ValidCase{"35791394:07", secs(kMaxSlurmTimeSeconds)},
                             // No limit, in any letter case.
                             ValidCase{"UNLIMITED", SlurmDuration::unlimited()},
                             ValidCase{"unlimited", SlurmDuration::unlimited()},
                             ValidCase{"Infinite", SlurmDuration::unlimited()},
                             ValidCase{"INFINITE", SlurmDuration::unlimited()}));

class SlurmTimeInvalid : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(SlurmTimeInvalid, IsRejectedWithReason) {
  Result<SlurmDuration> parsed = parseSlurmTime(GetParam().text);
  ASSERT_FALSE(parsed.ok()) << GetParam().text;
  EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
  const std::string& message = parsed.error().message();
  EXPECT_NE(message.find("(" + GetParam().reason), std::string::npos) << message;
  EXPECT_NE(message.find("use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED"),
            std::string::npos)
      << message;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, SlurmTimeInvalid,
    ::testing::Values(
        InvalidCase{"", "empty"}, InvalidCase{" ", "whitespace is not allowed"},
        InvalidCase{"1 ", "whitespace is not allowed"},
        InvalidCase{" 1", "whitespace is not allowed"},
        InvalidCase{"1: 30", "whitespace is not allowed"},
        InvalidCase{"1\t", "whitespace is not allowed"}, InvalidCase{"abc", "unexpected character"},
        InvalidCase{"1h", "unexpected character"}, InvalidCase{"1.5", "unexpected character"},
        InvalidCase{"+5", "unexpected character"}, InvalidCase{"0x10", "unexpected character"},
        InvalidCase{"1\n", "unexpected character"},
        InvalidCase{std::string("1\0", 2), "unexpected character"},
        InvalidCase{"\xef\xbc\x91", "unexpected character"},  // a full-width digit
        InvalidCase{"unlimit", "unexpected character"},
        InvalidCase{"UNLIMITEDX", "unexpected character"},
        InvalidCase{"-1", "write UNLIMITED for no limit"},
        InvalidCase{"-5", "negative times are not allowed"},
        InvalidCase{"-1-00", "negative times are not allowed"},
        InvalidCase{"1-", "hours are missing after the day count"},
        InvalidCase{"1--2", "more than one '-'"}, InvalidCase{"1-2-3", "more than one '-'"},
        InvalidCase{"1:2-3", "the day count must come first"},
        InvalidCase{"1:2:3:4", "too many fields"}, InvalidCase{"1-2:3:4:5", "too many fields"},
        InvalidCase{":", "a field is empty"}, InvalidCase{"1:", "a field is empty"},
        InvalidCase{":1", "a field is empty"}, InvalidCase{"1::2", "a field is empty"},
        InvalidCase{"1-:2", "a field is empty"},
        InvalidCase{"99999999999999999999999", "too large"}, InvalidCase{"2147483648", "too large"},
        InvalidCase{"35791395", "too large; the largest is 24855-03:14:07"},
        InvalidCase{"24855-03:14:08", "too large; the largest is 24855-03:14:07"},
        InvalidCase{"99999-00", "too large; the largest is 24855-03:14:07"},
        InvalidCase{"2147483647:59", "too large; the largest is 24855-03:14:07"}));

TEST(SlurmTimeParse, MessageQuotesTheInput) {
  Result<SlurmDuration> parsed = parseSlurmTime("1:2:3:4");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message(),
            "'1:2:3:4' is not a Slurm time (too many fields); use MM, MM:SS, HH:MM:SS, D-HH, "
            "D-HH:MM, D-HH:MM:SS or UNLIMITED");
}

TEST(SlurmTimeParse, MessageEscapesAndShortensGarbage) {
  std::string garbage(1000, 'x');
  garbage[0] = '\x01';
  Result<SlurmDuration> parsed = parseSlurmTime(garbage);
  ASSERT_FALSE(parsed.ok());
  const std::string& message = parsed.error().message();
  EXPECT_EQ(message.rfind("'\\x01xxx", 0), 0u) << message;
  EXPECT_LT(message.size(), 200u);
  EXPECT_NE(message.find("...'"), std::string::npos);
}

TEST(SlurmTimeFormat, KnownValues) {
  EXPECT_EQ(formatSlurmTime(secs(0)), "00:00:00");
  EXPECT_EQ(formatSlurmTime(secs(90)), "00:01:30");
  EXPECT_EQ(formatSlurmTime(secs(86399)), "23:59:59");
  EXPECT_EQ(formatSlurmTime(secs(86400)), "1-00:00:00");
  EXPECT_EQ(formatSlurmTime(secs(389730)), "4-12:15:30");
  EXPECT_EQ(formatSlurmTime(secs(kMaxSlurmTimeSeconds)), "24855-03:14:07");
  EXPECT_EQ(formatSlurmTime(SlurmDuration::unlimited()), "UNLIMITED");
}

TEST(SlurmTimeFormat, RoundTripsEdgesAndASpread) {
  std::vector<std::int64_t> values = {0,
                                      1,
                                      59,
                                      60,
                                      61,
                                      3599,
                                      3600,
                                      86399,
                                      86400,
                                      86401,
                                      90061,
                                      31536000,
                                      kMaxSlurmTimeSeconds - 1,
                                      kMaxSlurmTimeSeconds};
  // A deterministic spread over the whole range (a fixed linear congruential sequence).
  std::uint64_t state = 12345;
  for (int i = 0; i < 2000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    values.push_back(static_cast<std::int64_t>((state >> 33) % (kMaxSlurmTimeSeconds + 1)));
  }
  for (std::int64_t value : values) {
    std::string text = formatSlurmTime(secs(value));
    Result<SlurmDuration> back = parseSlurmTime(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.error().message();
    EXPECT_EQ(back->seconds(), value) << text;
  }
  Result<SlurmDuration> unlimited = parseSlurmTime(formatSlurmTime(SlurmDuration::unlimited()));
  ASSERT_TRUE(unlimited.ok());
  EXPECT_TRUE(unlimited->isUnlimited());
}

TEST(SlurmTimeDuration, UnlimitedOrdersAboveEveryFiniteValue) {
  EXPECT_LT(secs(0), secs(1));
  EXPECT_LT(secs(kMaxSlurmTimeSeconds), SlurmDuration::unlimited());
  EXPECT_EQ(SlurmDuration::unlimited(), SlurmDuration::unlimited());
  EXPECT_GT(SlurmDuration::unlimited(), secs(0));
  EXPECT_EQ(SlurmDuration(), secs(0));
  EXPECT_EQ(secs(90).toChrono(), std::chrono::seconds(90));
}

TEST(SlurmTimeDurationDeathTest, NegativeSecondsAndSecondsOfUnlimitedAbort) {
  EXPECT_DEATH(SlurmDuration::fromSeconds(-1), "check failed");
  EXPECT_DEATH((void)SlurmDuration::unlimited().seconds(), "check failed");
}

}  // namespace
}  // namespace accel
