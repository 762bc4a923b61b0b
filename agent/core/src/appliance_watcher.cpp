#include "accel/agent/appliance_watcher.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace accel::agent {

using appliance::ApplianceJob;

Attribution attribute(std::vector<ApplianceJob> listed, const std::vector<LiveJob>& live) {
  std::map<uint32_t, const LiveJob*> by_id;
  for (const auto& l : live) by_id.emplace(l.id, &l);
  std::map<uint32_t, size_t> kept;  // owned entries so far, by Slurm job
  Attribution out;
  for (auto& j : listed) {
    auto it = by_id.find(j.slurm_job_id);
    if (it == by_id.end()) continue;
    if (!appliance::ownedBy(j, it->second->uid, it->second->user)) {
      out.foreign.push_back(std::move(j));
      continue;
    }
    size_t& n = kept[j.slurm_job_id];
    if (n < kMaxApplianceJobsPerJob) {
      ++n;
      out.owned.push_back(std::move(j));
    } else if (n == kMaxApplianceJobsPerJob) {
      ++n;  // one entry for all the rest
      ApplianceJob rest;
      rest.slurm_job_id = j.slurm_job_id;
      rest.user = j.user;
      rest.uid = j.uid;
      rest.unreadable = "more than " + std::to_string(kMaxApplianceJobsPerJob) + " appliance jobs";
      out.owned.push_back(std::move(rest));
    }
  }
  return out;
}

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
                                   std::chrono::milliseconds interval, LiveJobs live,
                                   OnChange on_change, const Clock& clock, OnIgnored on_ignored)
    : client_(std::move(client)),
      interval_(interval),
      live_(std::move(live)),
      on_change_(std::move(on_change)),
      clock_(clock),
      on_ignored_(std::move(on_ignored)) {}

ApplianceWatcher::~ApplianceWatcher() { stop(); }

void ApplianceWatcher::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ApplianceWatcher::start() {
  thread_ = std::thread([this] { run(); });
}

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
ApplianceJob ApplianceWatcher::onNodeClock(ApplianceJob j, const ApplianceJob* old,
                                           int64_t answered_ns) const {
  const bool seen_before = prev_asked_ns_ > 0 && live_prev_.count(j.slurm_job_id) > 0;
  const int64_t lo = seen_before ? prev_asked_ns_ : std::numeric_limits<int64_t>::min();
  // A start or end once placed stands (also one the node placed itself for
  // an entry it could not read, which the appliance does not report).
  if (old != nullptr && old->start_ns > 0)
    j.start_ns = old->start_ns;
  else if (j.start_ns > 0)
    j.start_ns = std::clamp(j.start_ns, std::min(lo, answered_ns), answered_ns);
  if (old != nullptr && old->end_ns > 0 && (j.end_ns > 0 || appliance::isFinal(j.state))) {
    j.end_ns = old->end_ns;
  } else if (j.end_ns > 0) {
    int64_t floor = std::max(lo, j.start_ns);
    j.end_ns = std::clamp(j.end_ns, std::min(floor, answered_ns), answered_ns);
  }
  return j;
}

Status ApplianceWatcher::pollOnce() {
  auto live_list = live_();
  std::set<uint32_t> live;
  for (const auto& l : live_list) live.insert(l.id);
  Attribution seen;
  int64_t asked_ns = 0, answered_ns = 0;
  if (!live.empty()) {
    asked_ns = clock_.wallNs();
    auto jobs = client_->jobs();
    answered_ns = clock_.wallNs();
    if (!jobs.ok()) {
      std::lock_guard<std::mutex> g(mu_);
      last_error_ = jobs.error().message();
      return jobs.error();
    }
    seen = attribute(std::move(*jobs), live_list);
  }
  std::vector<ApplianceJob> changed, ignored;
  {
    std::lock_guard<std::mutex> g(mu_);
    last_error_.clear();
    std::map<Key, ApplianceJob> next;
    std::map<uint32_t, std::set<std::string>> earlier;
    std::set<uint32_t> later_runs;
    for (const auto& l : live_list)
      if (l.later_run) later_runs.insert(l.id);
    for (auto& raw : seen.owned) {
      Key key{raw.slurm_job_id, raw.id.empty() ? kUnreadableEntry : raw.id};
      if (next.count(key)) continue;  // listed twice: the first stands
      if (later_runs.count(raw.slurm_job_id) && !raw.id.empty() && raw.unreadable.empty()) {
        auto& gone = earlier[raw.slurm_job_id];
        auto known = earlier_.find(raw.slurm_job_id);
        const bool first_sight = !live_prev_.count(raw.slurm_job_id);
        if ((first_sight && appliance::isFinal(raw.state)) ||
            (known != earlier_.end() && known->second.count(raw.id))) {
          gone.insert(raw.id);
          continue;
        }
      }
      auto old = tracked_.find(key);
      const ApplianceJob* before = old == tracked_.end() ? nullptr : &old->second;
      ApplianceJob j = raw.unreadable.empty()
                           ? onNodeClock(std::move(raw), before, answered_ns)
                           : unreadable(std::move(raw), key.second, before, answered_ns);
      // Read at last: the placeholder's run goes on as the job's own (from
      // its start, also through a queue), until the job is over.
      if (before != nullptr && !before->unreadable.empty() && j.unreadable.empty()) {
        if (j.start_ns == 0) j.start_ns = before->start_ns;
        if (appliance::isFinal(j.state) && j.end_ns == 0) j.end_ns = answered_ns;
      }
      if (before == nullptr || before->state != j.state || before->systems != j.systems ||
          before->start_ns != j.start_ns || before->end_ns != j.end_ns)
        changed.push_back(j);
      next[key] = std::move(j);
    }
    // A placeholder no longer listed (the entry is gone, or reads well under
    // another key) stops counting now.
    for (const auto& [key, j] : tracked_)
      if (!j.unreadable.empty() && j.end_ns == 0 && live.count(key.first) && !next.count(key)) {
        ApplianceJob over = j;
        over.state = appliance::ApplianceState::kFailed;
        over.end_ns = std::max(answered_ns, j.start_ns);
        changed.push_back(over);
      }
    std::set<Key> told;
    for (auto& j : seen.foreign) {
      Key key{j.slurm_job_id, j.id};
      if (!ignored_.count(key) && !told.count(key)) ignored.push_back(j);
      told.insert(std::move(key));
    }
    ignored_ = std::move(told);
    tracked_ = std::move(next);  // jobs of Slurm jobs that ended here are forgotten
    earlier_ = std::move(earlier);
    prev_asked_ns_ = asked_ns;
    live_prev_ = std::move(live);
  }
  // Outside the lock: the callbacks may ask secondsOf().
  if (on_ignored_)
    for (const auto& j : ignored) on_ignored_(j);
  for (const auto& j : changed) on_change_(j);
  return okStatus();
}

// Fail closed for one Slurm job: an entry it cannot read is taken as what
// was last read of it, or else as running since this poll.
ApplianceJob ApplianceWatcher::unreadable(ApplianceJob raw, const std::string& id,
                                          const ApplianceJob* old, int64_t answered_ns) {
  if (old != nullptr && old->unreadable.empty()) return *old;
  ApplianceJob j;
  j.id = id;
  j.slurm_job_id = raw.slurm_job_id;
  j.user = std::move(raw.user);
  j.uid = raw.uid;
  j.state = appliance::ApplianceState::kRunning;
  j.start_ns = old != nullptr ? old->start_ns : answered_ns;
  j.unreadable = std::move(raw.unreadable);
  return j;
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
    if (any_live)
      cv_.wait_for(lk, interval_, wake);
    else
      cv_.wait(lk, wake);  // idle: sleep until a job becomes live
  }
}

std::vector<ApplianceJob> ApplianceWatcher::jobsOf(uint32_t slurm_job) const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<ApplianceJob> out;
  for (auto it = tracked_.lower_bound(Key{slurm_job, ""});
       it != tracked_.end() && it->first.first == slurm_job; ++it)
    out.push_back(it->second);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.create_ns < b.create_ns; });
  return out;
}

double ApplianceWatcher::secondsOf(uint32_t slurm_job) const {
  return applianceSeconds(jobsOf(slurm_job), clock_.wallNs());
}

std::string ApplianceWatcher::lastError() const {
  std::lock_guard<std::mutex> g(mu_);
  return last_error_;
}

}  // namespace accel::agent
