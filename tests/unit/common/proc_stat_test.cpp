#include "accel/common/proc_stat.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace accel {
namespace {

// A real line (bash on Debian 12) with starttime 437616 in field 22.
const std::string kStat =
    "26751 (sleep) S 26748 26751 26748 0 -1 4194560 92 0 0 0 0 0 0 0 20 0 1 0 437616 5586944 232 "
    "18446744073709551615 94 95 96 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 97 98 99 100 101 102 103 0\n";

std::string withComm(const std::string& comm) {
  return "42 (" + comm +
         ") S 1 42 42 0 -1 4194560 92 0 0 0 0 0 0 0 20 0 1 0 123456 5586944 232 0 0\n";
}

TEST(ParseStartTicks, RealLine) {
  auto t = parseStartTicks(kStat);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(*t, 437616u);
}

TEST(ParseStartTicks, CommandNamesThatLookLikeFields) {
  for (const std::string comm : {"a b", "a) b", ") ) )", "x) S 1 2 3 4", "(", "()", "", "tab\tx"}) {
    auto t = parseStartTicks(withComm(comm));
    ASSERT_TRUE(t.ok()) << "'" << comm << "': " << t.error().message();
    EXPECT_EQ(*t, 123456u) << comm;
  }
}

TEST(ParseStartTicks, TruncatedAndGarbage) {
  const std::string cases[] = {
      "",
      "garbage",
      "42 sleep S 1",
      "42 (sleep",
      kStat.substr(0, kStat.find(" 437616")),  // cut before field 22
      "42 (sleep) S 1 42 42 0 -1 4194560 92 0 0 0 0 0 0 0 20 0 1 0 12x3 5586944",
      "42 (sleep) S 1 42 42 0 -1 4194560 92 0 0 0 0 0 0 0 20 0 1 0  5586944",
      "42 (sleep)S 1 42 42 0 -1 4194560 92 0 0 0 0 0 0 0 20 0 1 0 123 5586944",
      "42 (sleep) S 1 42 42 0 -1 4194560 92 0 0 0 0 0 0 0 20 0 1 0 -123 5586944",
      "42 (sleep) S 1 42 42 0 -1 4194560 92 0 0 0 0 0 0 0 20 0 1 0 99999999999999999999999 1",
      std::string(5000, ')'),
  };
  for (const auto& text : cases) {
    auto t = parseStartTicks(text);
    EXPECT_FALSE(t.ok()) << "'" << text << "' gave " << (t.ok() ? std::to_string(*t) : "");
    if (!t.ok()) {
      EXPECT_EQ(t.error().code(), ErrorCode::kParse);
    }
  }
}

TEST(ReadStartTicks, FixtureTree) {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("proc-stat-" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "42");
  std::ofstream(root / "42" / "stat") << withComm("my (weird) task");
  std::filesystem::create_directories(root / "43");
  std::ofstream(root / "43" / "stat") << "43 (truncated";
  auto t = readStartTicks(42, root.string());
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(*t, 123456u);
  auto bad = readStartTicks(43, root.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("/43/stat"), std::string::npos) << bad.error().message();
  auto gone = readStartTicks(44, root.string());
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code(), ErrorCode::kNotFound);
  std::filesystem::remove_all(root);
}

TEST(ReadStartTicks, ThisProcessIsStableAndBeforeNow) {
  auto a = readStartTicks(getpid());
  auto b = readStartTicks(getpid());
  ASSERT_TRUE(a.ok()) << a.error().message();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*a, *b);
  // Started after boot, and no later than now (uptime in ticks).
  std::ifstream uptime("/proc/uptime");
  double up = 0;
  uptime >> up;
  EXPECT_LE(static_cast<double>(*a), up * static_cast<double>(sysconf(_SC_CLK_TCK)) + 1);
}

}  // namespace
}  // namespace accel
