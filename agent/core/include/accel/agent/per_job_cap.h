#pragma once
// A per-job allowance for what a job's user can make the agent do as often
// as they like: each of their appliance jobs and its changes, each report of
// a surrogate step's waiter. Each is an event streamed to the aggregator and
// kept in its spool, so one user could otherwise fill both. Thread-safe.
#include <cstdint>
#include <map>
#include <mutex>
#include <set>

namespace accel::agent {

// Events a job's appliance work may stream (appliance job changes and
// surrogate steps together). A job's appliance jobs are followed as before
// past it (budget, limits, steps); only their events stop.
inline constexpr uint32_t kMaxApplianceEventsPerJob = 1024;

class PerJobCap {
 public:
  explicit PerJobCap(uint32_t cap) : cap_(cap) {}

  enum class Take {
    kAllowed,
    kFirstRefused,  // the first refusal for this job: worth one log line
    kRefused,
  };
  Take take(uint32_t job_id);
  // Forgets every job not in `jobs` (jobs that ended here).
  void keepOnly(const std::set<uint32_t>& jobs);

 private:
  const uint32_t cap_;
  std::mutex mu_;
  std::map<uint32_t, uint32_t> taken_;  // by job; cap_ + 1 once refused
};

}  // namespace accel::agent
