#pragma once
// Follows the appliance jobs of the Slurm jobs on this node (Cerebras-style
// appliance, seed 000): reads the appliance's job list every interval while
// at least one job is live here, and reports each appliance job the first
// time it is seen and whenever its state or CS-X count changes. With no live
// job it does not poll at all (no idle wake-ups).
//
// The appliance is the source of truth, so nothing is persisted: a restarted
// daemon sees every appliance job again on its first poll. The times it
// reports are moved onto the node's clock (see onNodeClock): a start or end is
// kept within the window in which the node saw it happen.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "accel/appliance/appliance.h"
#include "accel/common/result.h"

namespace accel::agent {

// Seconds during which at least one of `jobs` was running, up to `now_ns`
// (overlapping runs count once; queue time never counts).
double applianceSeconds(const std::vector<appliance::ApplianceJob>& jobs, int64_t now_ns);

class ApplianceWatcher {
 public:
  using LiveJobs = std::function<std::vector<uint32_t>()>;  // Slurm jobs live on this node
  using OnChange = std::function<void(const appliance::ApplianceJob& job)>;
  using NowFn = std::function<int64_t()>;  // CLOCK_REALTIME ns

  ApplianceWatcher(std::shared_ptr<appliance::ApplianceClient> client, std::chrono::milliseconds interval,
                   LiveJobs live, OnChange on_change, NowFn now);
  ~ApplianceWatcher();  // stops the thread

  void start();
  // A job became live or ended: poll now if the watcher was idle (with jobs
  // already live, the next interval's poll sees the change).
  void poke();
  // One poll; what the thread does each interval. Public for tests.
  Status pollOnce();

  std::vector<appliance::ApplianceJob> jobsOf(uint32_t slurm_job) const;
  double secondsOf(uint32_t slurm_job) const;
  // The last poll's failure, empty after a good poll.
  std::string lastError() const;

 private:
  void run();
  appliance::ApplianceJob onNodeClock(appliance::ApplianceJob job, const appliance::ApplianceJob* old,
                                      int64_t answered_ns) const;

  std::shared_ptr<appliance::ApplianceClient> client_;
  std::chrono::milliseconds interval_;
  LiveJobs live_;
  OnChange on_change_;
  NowFn now_;

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::map<std::string, appliance::ApplianceJob> tracked_;  // by appliance job id, times on the node's clock
  int64_t prev_asked_ns_ = 0;            // when the last good poll asked (node clock); 0: none yet
  std::set<uint32_t> live_prev_;         // the Slurm jobs that poll covered
  std::string last_error_;
  bool poked_ = false;
  bool polling_ = false;  // the last round had live jobs: the next poll is due anyway
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace accel::agent
