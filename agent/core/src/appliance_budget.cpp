#include "accel/agent/appliance_budget.h"

#include <algorithm>
#include <limits>

namespace accel::agent {
namespace {

constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();

ActiveInterval* find(ApplianceBudget& b, const std::string& key, bool open_only) {
  for (auto& r : b.runs)
    if (r.key == key && (!open_only || r.end_ns == 0)) return &r;
  return nullptr;
}

// Measure of the union of the runs, each cut at `until_ns`.
int64_t unionUntil(const ApplianceBudget& b, int64_t until_ns) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const auto& r : b.runs) {
    int64_t end = std::min(r.end_ns == 0 ? kOpen : r.end_ns, until_ns);
    if (end > r.start_ns) spans.emplace_back(r.start_ns, end);
  }
  std::sort(spans.begin(), spans.end());
  int64_t total = 0, cur_start = 0, cur_end = 0;
  bool have = false;
  for (const auto& [s, e] : spans) {
    if (have && s <= cur_end) {
      cur_end = std::max(cur_end, e);
      continue;
    }
    if (have) total += cur_end - cur_start;
    cur_start = s;
    cur_end = e;
    have = true;
  }
  return have ? total + (cur_end - cur_start) : 0;
}

// When the used time reaches `limit_ns`, if something runs now; 0 otherwise.
// From the earliest open start on, every instant is covered, so the used
// time grows one for one from there.
int64_t reachesLimitAt(const ApplianceBudget& b, int64_t limit_ns) {
  int64_t open_start = kOpen;
  for (const auto& r : b.runs)
    if (r.end_ns == 0) open_start = std::min(open_start, r.start_ns);
  if (open_start == kOpen) return 0;
  return open_start + (limit_ns - unionUntil(b, open_start));
}

}  // namespace

bool noteApplianceJob(ApplianceBudget& b, const appliance::ApplianceJob& job) {
  if (job.start_ns <= 0) {
    // Still queued: queue time never counts. But a run opened for the job
    // while it could not be read (it counted as running) ends when the job
    // is read as over without ever having started.
    auto* open = find(b, job.id, true);
    if (open == nullptr || !appliance::isFinal(job.state)) return false;
    open->end_ns = std::max(job.end_ns, open->start_ns + 1);
    return true;
  }
  int64_t end = job.end_ns > 0 ? job.end_ns : (appliance::isFinal(job.state) ? job.start_ns : 0);
  ActiveInterval want{job.id, job.start_ns, end};
  if (auto* r = find(b, job.id, false)) {
    // A start or end once recorded stands (a restarted daemon's first look
    // at the appliance cannot place them as well as the look that saw them).
    if (r->start_ns > 0) want.start_ns = r->start_ns;
    if (r->end_ns > 0) want.end_ns = r->end_ns;
    if (want.end_ns > 0 && want.end_ns < want.start_ns) want.end_ns = want.start_ns;
    if (*r == want) return false;
    *r = want;
    return true;
  }
  b.runs.push_back(std::move(want));
  return true;
}

bool noteLocalSteps(ApplianceBudget& b, bool running, int64_t at_ns) {
  auto* open = find(b, kLocalStepsKey, true);
  if (running == (open != nullptr)) return false;
  if (running) {
    b.runs.push_back(ActiveInterval{kLocalStepsKey, at_ns, 0});
  } else {
    open->end_ns = std::max(at_ns, open->start_ns);
    if (open->end_ns == open->start_ns) open->end_ns = open->start_ns + 1;  // stays closed
  }
  return true;
}

int64_t usedNs(const ApplianceBudget& b, int64_t now_ns) { return unionUntil(b, now_ns); }

int64_t usedAtEndNs(const ApplianceBudget& b, int64_t end_ns) {
  if (b.enforced_ns == 0) return usedNs(b, end_ns);
  int64_t stop = b.killed_ns != 0 ? std::min(end_ns, b.killed_ns) : end_ns;
  stop = std::max(stop, b.enforced_ns);
  return usedNs(b, b.enforced_ns) + (stop - b.enforced_ns);
}

int64_t LimitTimes::earliest() const {
  int64_t best = 0;
  for (int64_t t : {warn_ns, enforce_ns, kill_ns})
    if (t != 0 && (best == 0 || t < best)) best = t;
  return best;
}

LimitTimes limitTimes(const ApplianceBudget& b, const LimitPolicy& p, int64_t now_ns) {
  LimitTimes t;
  if (p.limit_sec <= 0) return t;
  const int64_t limit_ns = std::max<int64_t>(1, p.limit_sec * 1'000'000'000 - b.carried_ns);
  if (b.enforced_ns != 0) {
    if (b.killed_ns == 0) t.kill_ns = b.enforced_ns + p.grace_ns;
    return t;
  }
  t.enforce_ns = reachesLimitAt(b, limit_ns);
  if (t.enforce_ns == 0 && usedNs(b, now_ns) >= limit_ns) t.enforce_ns = now_ns;
  if (t.enforce_ns != 0 && p.signal > 0 && b.warned_ns == 0)
    t.warn_ns = std::max<int64_t>(1, t.enforce_ns - int64_t{p.lead_sec} * 1'000'000'000);
  return t;
}

LimitAction dueAction(const ApplianceBudget& b, const LimitPolicy& p, int64_t now_ns) {
  auto t = limitTimes(b, p, now_ns);
  if (t.warn_ns != 0 && t.warn_ns <= now_ns) return LimitAction::kWarn;
  if (t.enforce_ns != 0 && t.enforce_ns <= now_ns) return LimitAction::kEnforce;
  if (t.kill_ns != 0 && t.kill_ns <= now_ns) return LimitAction::kKill;
  return LimitAction::kNone;
}

}  // namespace accel::agent
