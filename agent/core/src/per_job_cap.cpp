#include "accel/agent/per_job_cap.h"

namespace accel::agent {

PerJobCap::Take PerJobCap::take(uint32_t job_id) {
  std::lock_guard<std::mutex> g(mu_);
  uint32_t& n = taken_[job_id];
  if (n < cap_) {
    ++n;
    return Take::kAllowed;
  }
  if (n == cap_) {
    ++n;
    return Take::kFirstRefused;
  }
  return Take::kRefused;
}

void PerJobCap::keepOnly(const std::set<uint32_t>& jobs) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto it = taken_.begin(); it != taken_.end();)
    it = jobs.count(it->first) ? std::next(it) : taken_.erase(it);
}

}  // namespace accel::agent
