#include "accel/agent/job_locks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace accel::agent {
namespace {

using namespace std::chrono_literals;

// Job ids 1 and 65 shared a stripe of the lock this replaced: a slow call
// for one held up the other.
TEST(JobLocks, OtherJobsNeverWait) {
  JobLocks locks;
  std::promise<void> holding, release;
  std::thread slow([&] {
    JobLocks::Guard g(locks, 1);
    holding.set_value();
    release.get_future().wait();
  });
  holding.get_future().wait();
  auto other = std::async(std::launch::async, [&] {
    for (uint32_t id : {65u, 129u, 2u}) JobLocks::Guard g(locks, id);
    return true;
  });
  EXPECT_EQ(other.wait_for(5s), std::future_status::ready) << "a job waited for another job's lock";
  release.set_value();
  slow.join();
  EXPECT_EQ(locks.entries(), 0u);
}

TEST(JobLocks, OneJobIsSerialized) {
  JobLocks locks;
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        JobLocks::Guard g(locks, 7);
        int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        --inside;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(most.load(), 1) << "two calls for one job ran at once";
  EXPECT_EQ(locks.entries(), 0u) << "entries outlive their last user";
}

TEST(JobLocks, WaiterGetsTheLockAfterRelease) {
  JobLocks locks;
  std::promise<void> holding, release;
  std::thread first([&] {
    JobLocks::Guard g(locks, 42);
    holding.set_value();
    release.get_future().wait();
  });
  holding.get_future().wait();
  std::atomic<bool> got{false};
  std::thread second([&] {
    JobLocks::Guard g(locks, 42);
    got = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(got.load()) << "the same job's second call did not wait";
  EXPECT_EQ(locks.entries(), 1u);
  release.set_value();
  first.join();
  second.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(locks.entries(), 0u);
}

}  // namespace
}  // namespace accel::agent
