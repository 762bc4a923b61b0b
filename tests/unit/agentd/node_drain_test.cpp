#include "accel/agentd/node_drain.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace accel::agentd {
namespace {

// The drain runs on the drainer's own thread: a slurmctld that takes its
// time holds up no prolog, and a failed drain is told, not thrown.
TEST(NodeDrainerTest, QueuesWithoutWaitingOncePerJobAndTellsFailures) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::vector<uint32_t> outcomes_ok, outcomes_failed;
  int calls = 0;
  NodeDrainer drainer(
      [&](const std::string& node, const std::string&) -> Status {
        std::unique_lock<std::mutex> g(mu);
        ++calls;
        cv.wait(g, [&] { return release; });
        if (node == "bad") return Error(ErrorCode::kUnavailable, "slurmctld: no answer");
        return okStatus();
      },
      [&](uint32_t job, const std::string&, const Status& s) {
        std::lock_guard<std::mutex> g(mu);
        (s.ok() ? outcomes_ok : outcomes_failed).push_back(job);
      });
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(drainer.drainOnce(1, "n1", "accel: one"));
  EXPECT_TRUE(drainer.drainOnce(2, "bad", "accel: two"));
  EXPECT_FALSE(drainer.drainOnce(1, "n1", "accel: one again"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500))
      << "queueing waited for the drain";
  {
    std::lock_guard<std::mutex> g(mu);
    release = true;
  }
  cv.notify_all();
  drainer.waitIdle();
  std::lock_guard<std::mutex> g(mu);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(outcomes_ok, std::vector<uint32_t>{1});
  EXPECT_EQ(outcomes_failed, std::vector<uint32_t>{2});
}

// Job ids are remembered up to a bound; one asked long ago may drain again.
TEST(NodeDrainerTest, RemembersABoundedNumberOfJobs) {
  std::atomic<int> calls{0};
  NodeDrainer drainer([&](const std::string&, const std::string&) {
    ++calls;
    return okStatus();
  });
  for (uint32_t j = 1; j <= NodeDrainer::kRemembered; ++j)
    EXPECT_TRUE(drainer.drainOnce(j, "n1", "r"));
  EXPECT_FALSE(drainer.drainOnce(1, "n1", "r"));
  EXPECT_TRUE(drainer.drainOnce(NodeDrainer::kRemembered + 1, "n1", "r"));
  EXPECT_TRUE(drainer.drainOnce(1, "n1", "r")) << "job 1 was forgotten";
  drainer.waitIdle();
  EXPECT_EQ(calls.load(), static_cast<int>(NodeDrainer::kRemembered) + 2);
}

}  // namespace
}  // namespace accel::agentd
