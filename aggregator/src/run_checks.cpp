#include "accel/aggregator/run_checks.h"

#include <algorithm>

namespace accel::aggregator {
namespace {

int64_t nanos(std::chrono::nanoseconds d) { return d.count(); }

}  // namespace

RunChecker::RunChecker(Factory make_runs, const Clock& clock, Metrics& metrics, Options options)
    : make_runs_(std::move(make_runs)),
      clock_(clock),
      metrics_(metrics),
      options_(options),
      thread_([this] { run(); }) {}

RunChecker::~RunChecker() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void RunChecker::ask(uint32_t job_id, int64_t after_ns) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    if (jobs_.size() >= options_.max_jobs) forgetOld(clock_.wallNs());
    if (jobs_.size() >= options_.max_jobs) return;  // asked again later
    it = jobs_.try_emplace(job_id).first;
  }
  Job& job = it->second;
  if (job.answer) {
    ready_[job_id] = *job.answer;
    if (job.answer->as_of_ns >= after_ns) return;
  }
  job.wanted_after_ns = std::max(job.wanted_after_ns, after_ns);
  cv_.notify_all();
}

std::vector<RunAnswer> RunChecker::take() {
  std::lock_guard lock(mu_);
  std::vector<RunAnswer> out;
  out.reserve(ready_.size());
  for (auto& [id, answer] : ready_) out.push_back(std::move(answer));
  ready_.clear();
  return out;
}

void RunChecker::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    int64_t wait_ns = -1;
    auto due = nextDue(clock_.monoNs(), &wait_ns);
    if (due) {
      lookUp(lock, *due);
      continue;
    }
    if (wait_ns < 0)
      cv_.wait(lock);
    else
      cv_.wait_for(lock, std::min<std::chrono::nanoseconds>(std::chrono::nanoseconds(wait_ns),
                                                            options_.recheck));
  }
}

std::optional<uint32_t> RunChecker::nextDue(int64_t now_mono, int64_t* wait_ns) {
  for (const auto& [id, job] : jobs_) {
    if (job.wanted_after_ns == kNotWanted) continue;
    if (job.next_lookup_mono <= now_mono) return id;
    const int64_t left = job.next_lookup_mono - now_mono;
    *wait_ns = *wait_ns < 0 ? left : std::min(*wait_ns, left);
  }
  return std::nullopt;
}

// One lookup, made without the lock: the ingest thread asks and takes
// meanwhile.
void RunChecker::lookUp(std::unique_lock<std::mutex>& lock, uint32_t job_id) {
  const int64_t sent_ns = clock_.wallNs();
  jobs_[job_id].next_lookup_mono = clock_.monoNs() + nanos(options_.min_interval);
  lock.unlock();
  if (!runs_) runs_ = make_runs_();
  Result<JobRun> run = runs_ ? runs_->currentRun(job_id)
                             : Result<JobRun>(Error(ErrorCode::kUnavailable, "no slurmctld"));
  lock.lock();
  Job& job = jobs_[job_id];
  if (run.ok() || run.error().code() == ErrorCode::kNotFound) {
    RunAnswer answer{job_id, run.ok(), run.ok() ? std::move(*run) : JobRun{}, sent_ns};
    if (answer.as_of_ns >= job.wanted_after_ns) job.wanted_after_ns = kNotWanted;
    job.answer = answer;
    job.retry_ns = 0;
    ready_[job_id] = std::move(answer);
  } else {
    ++metrics_.slurmctld_failures;
    job.retry_ns =
        std::clamp(job.retry_ns * 2, nanos(options_.retry_min), nanos(options_.retry_max));
    job.next_lookup_mono = std::max(job.next_lookup_mono, clock_.monoNs() + job.retry_ns);
  }
  forgetOld(clock_.wallNs());
}

// Answers nobody waits for are kept `keep` after they came, for the asks
// that may follow (the other nodes of a run, repeated claims).
void RunChecker::forgetOld(int64_t now_wall) {
  const int64_t keep = nanos(options_.keep);
  std::erase_if(jobs_, [&](const auto& entry) {
    const Job& job = entry.second;
    return job.wanted_after_ns == kNotWanted && job.answer &&
           now_wall - job.answer->as_of_ns > keep;
  });
}

}  // namespace accel::aggregator
