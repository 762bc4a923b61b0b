#include "accel/agent/telemetry_sampler.h"

#include <time.h>

#include <algorithm>
#include <map>

#include "accel/agent/cgroup_job.h"

namespace accel::agent {
namespace {

int64_t threadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

TelemetrySampler::TelemetrySampler(std::unique_ptr<telemetry::TelemetrySource> source,
                                   Options options)
    : source_(std::move(source)), options_(std::move(options)) {
  ACCEL_CHECK(source_ != nullptr);
  ACCEL_CHECK(options_.interval.count() > 0);
  if (!options_.job_of) options_.job_of = [](uint32_t pid) { return jobOfPid(pid); };
  state_.source = source_->describe();
}

TelemetrySampler::~TelemetrySampler() { stop(); }

void TelemetrySampler::start() {
  std::lock_guard lock(mu_);
  if (running_) return;
  stopping_ = false;
  running_ = true;
  thread_ = std::thread([this] { run(); });
}

void TelemetrySampler::stop() {
  {
    std::lock_guard lock(mu_);
    if (!running_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  std::lock_guard lock(mu_);
  running_ = false;
  done_.notify_all();
}

uint64_t TelemetrySampler::requestLocked() {
  // A sample of its own that begins after this call: after any under way
  // and after those asked for before.
  uint64_t target = std::max(requested_, started_) + 1;
  requested_ = target;
  wake_.notify_all();
  return target;
}

void TelemetrySampler::startJob(uint32_t job_id, const std::vector<DeviceRef>& devices) {
  std::lock_guard lock(mu_);
  jobs_.startJob(job_id, devices);
  requestLocked();
}

std::optional<JobFigures> TelemetrySampler::endJob(uint32_t job_id,
                                                   std::chrono::milliseconds wait) {
  std::unique_lock lock(mu_);
  if (wait.count() > 0 && running_ && !stopping_ && jobs_.snapshot(job_id)) {
    uint64_t target = requestLocked();
    done_.wait_for(lock, wait, [&] { return taken_ >= target || !running_ || stopping_; });
  }
  return jobs_.endJob(job_id);
}

std::optional<JobFigures> TelemetrySampler::snapshot(uint32_t job_id) const {
  std::lock_guard lock(mu_);
  return jobs_.snapshot(job_id);
}

std::vector<JobFigures> TelemetrySampler::snapshots() const {
  std::lock_guard lock(mu_);
  return jobs_.snapshots();
}

std::vector<StrayProcess> TelemetrySampler::takeStrays() {
  std::lock_guard lock(mu_);
  return jobs_.takeStrays();
}

bool TelemetrySampler::sampleNow(std::chrono::milliseconds wait) {
  std::unique_lock lock(mu_);
  if (!running_ || stopping_) return false;
  uint64_t target = requestLocked();
  return done_.wait_for(lock, wait, [&] { return taken_ >= target || stopping_; }) &&
         taken_ >= target;
}

TelemetrySampler::State TelemetrySampler::state() const {
  std::lock_guard lock(mu_);
  State out = state_;
  out.running = running_ && !stopping_;
  out.jobs = jobs_.jobCount();
  return out;
}

void TelemetrySampler::run() {
  std::unique_lock lock(mu_);
  auto due = std::chrono::steady_clock::now();
  while (!stopping_) {
    if (requested_ <= started_) {
      if (jobs_.empty()) {
        // Nothing to account: sleep until a job or a request comes.
        wake_.wait(lock, [&] { return stopping_ || requested_ > started_ || !jobs_.empty(); });
        continue;
      }
      if (std::chrono::steady_clock::now() < due) {
        wake_.wait_until(lock, due, [&] { return stopping_ || requested_ > started_; });
        continue;
      }
    }
    sampleOnce(lock);
    due = std::chrono::steady_clock::now() + options_.interval;
    if (options_.after_sample) {
      lock.unlock();
      options_.after_sample();
      lock.lock();
    }
  }
}

void TelemetrySampler::sampleOnce(std::unique_lock<std::mutex>& lock) {
  ++started_;
  lock.unlock();
  int64_t cpu_start = threadCpuNs();
  const auto wall_start = std::chrono::steady_clock::now();
  auto readings = source_->sample();
  const auto wall = std::chrono::steady_clock::now() - wall_start;
  // The pids' jobs are read here, outside the lock: /proc is file I/O.
  std::map<uint32_t, std::optional<uint32_t>> owners;
  if (readings) {
    for (const auto& reading : *readings) {
      for (const auto& p : reading.processes) {
        if (owners.count(p.pid) == 0) owners[p.pid] = options_.job_of(p.pid);
      }
    }
  }
  lock.lock();
  if (readings) {
    jobs_.record(*readings, [&](uint32_t pid) { return owners[pid]; });
    for (const auto& reading : *readings) {
      if (!reading.error.empty()) state_.last_error = reading.error;
    }
  } else {
    ++state_.failures;
    state_.last_error = readings.error().message();
  }
  ++state_.samples;
  state_.last_sample_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count();
  state_.cpu_ns += threadCpuNs() - cpu_start;
  taken_ = started_;
  done_.notify_all();
}

}  // namespace accel::agent
