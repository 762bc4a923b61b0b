// Reading what a requeued job's earlier runs used from its summaries in
// accounting (sacct -D -X -o AdminComment: one line per run).
#include "accel/agentd/earlier_runs.h"

#include <gtest/gtest.h>

namespace accel::agentd {
namespace {

constexpr int64_t kSec = 1'000'000'000;

TEST(EarlierRuns, TheLargestSummaryOfTheRunsCounts) {
  // The first run's row holds the summary written after it; the second run's
  // row (this run) none yet; another tool's segment around ours is skipped.
  auto used = earlierRunsUsedNs(
      "JS1:abc;accel={\"v\":1,\"result\":\"ok\",\"appliance_s\":4,\"restarts\":0}\n"
      "\n");
  ASSERT_TRUE(used.ok()) << used.error().message();
  EXPECT_EQ(*used, 4 * kSec);
  used = earlierRunsUsedNs(
      "accel={\"v\":1,\"appliance_s\":4}\n"
      "accel={\"v\":1,\"appliance_s\":9,\"restarts\":1,\"run_appliance_s\":[4,5]};JS1:x\n");
  ASSERT_TRUE(used.ok());
  EXPECT_EQ(*used, 9 * kSec);
}

TEST(EarlierRuns, NoSummaryYetIsNotFoundAndDamageIsSkipped) {
  for (const char* out :
       {"", "\n\n", "JS1:abc\n", "accel={\"v\":1\n", "accel={\"appliance_s\":\"4\"}\n",
        "accel={\"appliance_s\":-3}\n", "accel=[1,2]\n"}) {
    SCOPED_TRACE(out);
    auto used = earlierRunsUsedNs(out);
    ASSERT_FALSE(used.ok());
    EXPECT_EQ(used.error().code(), ErrorCode::kNotFound);
  }
  auto used = earlierRunsUsedNs("accel={\"appliance_s\":\"4\"}\naccel={\"appliance_s\":2}\n");
  ASSERT_TRUE(used.ok());
  EXPECT_EQ(*used, 2 * kSec) << "a damaged line does not hide a good one";
  used = earlierRunsUsedNs("accel={\"appliance_s\":18446744073709551615}\n");
  ASSERT_TRUE(used.ok());
  EXPECT_GT(*used, 0) << "bounded, never wrapped";
}

}  // namespace
}  // namespace accel::agentd
