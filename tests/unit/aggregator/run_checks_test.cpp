// RunChecker: lookups of a job's current run on a thread of their own, one
// per job however often it is asked, kept for the asks that follow, retried
// with growing delays while slurmctld does not answer. The clock is a fake
// one; only the checker's thread runs for real, so each check waits (at most
// a few seconds) for what that thread has done.
#include "accel/aggregator/run_checks.h"

#include <gtest/gtest.h>

#include <thread>

#include "fake_clock.h"
#include "fake_run_checks.h"

namespace accel::aggregator {
namespace {

using support::FakeClock;
constexpr int64_t kSec = 1'000'000'000;

class RunCheckerTest : public ::testing::Test {
 protected:
  RunCheckerTest() {
    runs_ = std::make_shared<FakeJobRuns>();
    auto shared = runs_;
    checker_ = std::make_unique<RunChecker>(
        [shared]() -> std::unique_ptr<JobRuns> { return std::make_unique<Forward>(shared); },
        clock_, metrics_, RunChecker::Options{.recheck = std::chrono::milliseconds(5)});
  }
  // Collects answers until one about `job` comes (or 5 s pass).
  std::optional<RunAnswer> answerFor(uint32_t job) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      for (auto& a : checker_->take())
        if (a.job_id == job) return a;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return std::nullopt;
  }
  // The checker owns its JobRuns; this one hands every call to the test's.
  struct Forward final : JobRuns {
    explicit Forward(std::shared_ptr<FakeJobRuns> to) : to_(std::move(to)) {}
    Result<JobRun> currentRun(uint32_t job_id) override { return to_->currentRun(job_id); }
    std::shared_ptr<FakeJobRuns> to_;
  };

  FakeClock clock_{100 * kSec};
  Metrics metrics_;
  std::shared_ptr<FakeJobRuns> runs_;
  std::unique_ptr<RunChecker> checker_;
};

TEST_F(RunCheckerTest, AnswersWhatSlurmctldSaysAndKeepsIt) {
  const JobRun run{1, true, {"n2", "n3"}};
  runs_->set(42, run);
  checker_->ask(42, clock_.wallNs());
  auto a = answerFor(42);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->found);
  EXPECT_EQ(a->run, run);
  EXPECT_EQ(a->as_of_ns, 100 * kSec);
  EXPECT_EQ(runs_->lookups(42), 1);
  // Asked again about a moment it already answers for: the kept answer, at once.
  checker_->ask(42, 90 * kSec);
  auto again = checker_->take();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0], *a);
  // A job slurmctld does not know is an answer too.
  checker_->ask(7, clock_.wallNs());
  auto unknown = answerFor(7);
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(unknown->found);
  EXPECT_EQ(metrics_.slurmctld_failures, 0u);
}

// A flood of asks about one job makes one lookup per min_interval; the kept
// answer goes out meanwhile, and the newer one once the interval is over.
TEST_F(RunCheckerTest, OneLookupPerJobAndInterval) {
  runs_->set(42, JobRun{0, true, {"n1"}});
  checker_->ask(42, clock_.wallNs());
  ASSERT_TRUE(answerFor(42));
  clock_.advance(kSec / 10);
  for (int i = 0; i < 100; ++i) checker_->ask(42, clock_.wallNs());
  auto kept = answerFor(42);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->as_of_ns, 100 * kSec) << "the kept answer";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(runs_->lookups(42), 1) << "not before the interval";
  runs_->set(42, JobRun{1, true, {"n2"}});
  clock_.advance(kSec);
  auto fresh = answerFor(42);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->run.restart_count, 1u);
  EXPECT_GE(fresh->as_of_ns, 101 * kSec);
  EXPECT_EQ(runs_->lookups(42), 2);
}

// slurmctld down: no answer, the failure counted, retried after 1 s, 2 s, ...
TEST_F(RunCheckerTest, RetriesWhileSlurmctldDoesNotAnswer) {
  runs_->set(42, Error(ErrorCode::kUnavailable, "Unable to contact slurm controller"));
  checker_->ask(42, clock_.wallNs());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (metrics_.slurmctld_failures < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(metrics_.slurmctld_failures, 1u);
  EXPECT_TRUE(checker_->take().empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(runs_->lookups(42), 1) << "not before the retry delay";
  clock_.advance(kSec);
  while (metrics_.slurmctld_failures < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(metrics_.slurmctld_failures, 2u);
  runs_->set(42, JobRun{1, true, {"n2"}});
  clock_.advance(kSec);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(runs_->lookups(42), 2) << "the delay doubled to 2 s";
  clock_.advance(kSec);
  auto a = answerFor(42);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->run.restart_count, 1u);
  EXPECT_EQ(runs_->lookups(42), 3);
}

}  // namespace
}  // namespace accel::aggregator
