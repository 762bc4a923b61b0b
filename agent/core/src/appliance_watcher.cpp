#include "accel/agent/appliance_watcher.h"

#include <algorithm>
#include <limits>
#include <set>

namespace accel::agent {

using appliance::ApplianceJob;

double applianceSeconds(const std::vector<ApplianceJob>& jobs, int64_t now_ns) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (const auto& j : jobs) {
    if (j.start_ns <= 0) continue;  // never ran: queue time does not count
    int64_t end = j.end_ns > 0 ? j.end_ns : (appliance::isFinal(j.state) ? j.start_ns : now_ns);
    if (end > j.start_ns) runs.emplace_back(j.start_ns, end);
  }
  std::sort(runs.begin(), runs.end());
  int64_t total = 0, cur_start = 0, cur_end = 0;
  bool open = false;
  for (const auto& [s, e] : runs) {
    if (open && s <= cur_end) {
      cur_end = std::max(cur_end, e);
      continue;
    }
    if (open) total += cur_end - cur_start;
    cur_start = s;
    cur_end = e;
    open = true;
  }
  if (open) total += cur_end - cur_start;
  return static_cast<double>(total) / 1e9;
}

ApplianceWatcher::ApplianceWatcher(std::shared_ptr<appliance::ApplianceClient> client,
                                   std::chrono::milliseconds interval, LiveJobs live, OnChange on_change,
                                   NowFn now)
    : client_(std::move(client)),
      interval_(interval),
      live_(std::move(live)),
      on_change_(std::move(on_change)),
      now_(std::move(now)) {}

ApplianceWatcher::~ApplianceWatcher() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ApplianceWatcher::start() { thread_ = std::thread([this] { run(); }); }

void ApplianceWatcher::poke() {
  {
    std::lock_guard<std::mutex> g(mu_);
    // While polling every interval anyway, a prolog or epilog does not cost
    // an extra appliance call; only an idle watcher is woken.
    if (polling_) return;
    poked_ = true;
  }
  cv_.notify_all();
}

// The appliance stamps its jobs with its own clock; limits are kept on the
// node's. A time the appliance reports is trusted only within the window in
// which the node saw the change happen: after the previous list was asked for
// (when the job was not yet running, or not yet over) and before this list
// came back. Clocks that agree are left exact; clocks that disagree cost at
// most one poll interval, never the skew (an hour ahead or behind).
ApplianceJob ApplianceWatcher::onNodeClock(ApplianceJob j, const ApplianceJob* old, int64_t answered_ns) const {
  const bool seen_before = prev_asked_ns_ > 0 && live_prev_.count(j.slurm_job_id) > 0;
  const int64_t lo = seen_before ? prev_asked_ns_ : std::numeric_limits<int64_t>::min();
  if (j.start_ns > 0) {
    if (old != nullptr && old->start_ns > 0) j.start_ns = old->start_ns;
    else j.start_ns = std::clamp(j.start_ns, std::min(lo, answered_ns), answered_ns);
  }
  if (j.end_ns > 0) {
    if (old != nullptr && old->end_ns > 0) {
      j.end_ns = old->end_ns;
    } else {
      int64_t floor = std::max(lo, j.start_ns);
      j.end_ns = std::clamp(j.end_ns, std::min(floor, answered_ns), answered_ns);
    }
  }
  return j;
}

Status ApplianceWatcher::pollOnce() {
  auto live_list = live_();
  std::set<uint32_t> live(live_list.begin(), live_list.end());
  std::vector<ApplianceJob> seen;
  int64_t asked_ns = 0, answered_ns = 0;
  if (!live.empty()) {
    asked_ns = now_();
    auto jobs = client_->jobs();
    answered_ns = now_();
    if (!jobs.ok()) {
      std::lock_guard<std::mutex> g(mu_);
      last_error_ = jobs.error().message();
      return jobs.error();
    }
    for (auto& j : *jobs)
      if (live.count(j.slurm_job_id)) seen.push_back(std::move(j));
  }
  std::vector<ApplianceJob> changed;
  {
    std::lock_guard<std::mutex> g(mu_);
    last_error_.clear();
    std::map<std::string, ApplianceJob> next;
    for (auto& raw : seen) {
      auto old = tracked_.find(raw.id);
      ApplianceJob j = onNodeClock(std::move(raw), old == tracked_.end() ? nullptr : &old->second, answered_ns);
      if (old == tracked_.end() || old->second.state != j.state || old->second.systems != j.systems ||
          old->second.start_ns != j.start_ns || old->second.end_ns != j.end_ns)
        changed.push_back(j);
      next[j.id] = std::move(j);
    }
    tracked_ = std::move(next);  // jobs of Slurm jobs that ended here are forgotten
    prev_asked_ns_ = asked_ns;
    live_prev_ = std::move(live);
  }
  for (const auto& j : changed) on_change_(j);  // outside the lock: it may ask secondsOf()
  return okStatus();
}

void ApplianceWatcher::run() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_) {
    lk.unlock();
    bool any_live = !live_().empty();
    (void)pollOnce();  // failures are kept in last_error_ and retried next time
    lk.lock();
    poked_ = false;
    polling_ = any_live;
    auto wake = [this] { return stop_ || poked_; };
    if (any_live) cv_.wait_for(lk, interval_, wake);
    else cv_.wait(lk, wake);  // idle: sleep until a job becomes live
  }
}

std::vector<ApplianceJob> ApplianceWatcher::jobsOf(uint32_t slurm_job) const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<ApplianceJob> out;
  for (const auto& [id, j] : tracked_)
    if (j.slurm_job_id == slurm_job) out.push_back(j);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.create_ns < b.create_ns; });
  return out;
}

double ApplianceWatcher::secondsOf(uint32_t slurm_job) const { return applianceSeconds(jobsOf(slurm_job), now_()); }

std::string ApplianceWatcher::lastError() const {
  std::lock_guard<std::mutex> g(mu_);
  return last_error_;
}

}  // namespace accel::agent
