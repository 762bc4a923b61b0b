#include "accel/agent/idle_watch.h"

namespace accel::agent {

std::vector<JobIdleness> idlenessOf(const std::vector<JobFigures>& jobs) {
  std::vector<JobIdleness> out;
  for (const auto& job : jobs) {
    JobIdleness j{job.job_id, job.idle_samples, {}};
    for (const auto& d : job.devices)
      if (d.found) j.devices.push_back(d.index);
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<IdleJob> IdleWatch::check(const std::vector<JobIdleness>& jobs,
                                      std::chrono::milliseconds interval,
                                      std::chrono::seconds after) {
  std::set<uint32_t> listed;
  for (const auto& j : jobs) listed.insert(j.job_id);
  std::erase_if(told_, [&](uint32_t id) { return !listed.contains(id); });
  std::vector<IdleJob> out;
  if (after.count() <= 0 || interval.count() <= 0) return out;
  const auto after_ms = std::chrono::duration_cast<std::chrono::milliseconds>(after).count();
  for (const auto& j : jobs) {
    if (j.idle_samples == 0 || told_.contains(j.job_id)) continue;
    const uint64_t idle_ms = j.idle_samples * static_cast<uint64_t>(interval.count());
    if (idle_ms < static_cast<uint64_t>(after_ms)) continue;
    told_.insert(j.job_id);
    out.push_back(IdleJob{j.job_id, idle_ms / 1000, j.devices});
  }
  return out;
}

}  // namespace accel::agent
