#pragma once
// TelemetrySampler: the one thread that reads a TelemetrySource for the
// node's jobs, every interval while at least one job is accounted (nothing
// is read while none is), and keeps their figures (JobTelemetry). The
// daemon's handlers only register and unregister jobs and read figures:
// they never wait on the source unless they ask to (endJob's `wait`).
//
// A job's start asks for a sample at once, so that its energy is counted
// from its prolog and not from the next tick; its end may wait for one final
// sample. Thread-safe: every public call may come from any thread.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "accel/agent/job_telemetry.h"
#include "accel/telemetry/telemetry_source.h"

namespace accel::agent {

class TelemetrySampler {
 public:
  struct Options {
    std::chrono::milliseconds interval{10'000};  // TelemetryInterval
    JobOfPid job_of;                             // unset: jobOfPid() on /proc
    // Called on the thread after each sample, without the sampler's lock
    // (it may read snapshots()); unset: nothing.
    std::function<void()> after_sample{};
  };

  TelemetrySampler(std::unique_ptr<telemetry::TelemetrySource> source, Options options);
  ~TelemetrySampler();  // stop()
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  // Starts the thread; a second call does nothing.
  void start();
  // Stops the thread and waits for it (a sample under way finishes first).
  // Idempotent. Figures stay readable.
  void stop();

  // See JobTelemetry; startJob also asks for a sample at once.
  void startJob(uint32_t job_id, const std::vector<DeviceRef>& devices);
  // Ends the job's accounting. With `wait` above zero and the thread running,
  // first asks for a sample and waits up to `wait` for it, so the figures
  // reach the job's end; on time-out they stop at the last sample taken.
  std::optional<JobFigures> endJob(uint32_t job_id,
                                   std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  std::optional<JobFigures> snapshot(uint32_t job_id) const;
  std::vector<JobFigures> snapshots() const;  // every job accounted now
  std::vector<StrayProcess> takeStrays();

  // Asks for a sample now and waits up to `wait` for it to be taken. False
  // when the thread is not running or the time ran out.
  bool sampleNow(std::chrono::milliseconds wait);

  struct State {
    std::string source;      // the source's describe()
    uint64_t samples = 0;    // samples taken
    uint64_t failures = 0;   // samples the source failed as a whole
    int64_t cpu_ns = 0;      // CPU time of the thread spent sampling
    std::string last_error;  // the last failure, whole or of one device
    bool running = false;
    int64_t last_sample_ns = 0;  // wall time the last sample took
    size_t jobs = 0;             // jobs accounted now
  };
  State state() const;

 private:
  void run();
  void sampleOnce(std::unique_lock<std::mutex>& lock);
  // Asks for a sample of its own; returns the count of samples taken at which
  // it is done.
  uint64_t requestLocked();

  std::unique_ptr<telemetry::TelemetrySource> source_;
  Options options_;
  std::string description_;

  mutable std::mutex mu_;
  std::condition_variable wake_;  // the thread: a request, a job, or stop
  std::condition_variable done_;  // waiters: a sample was taken
  JobTelemetry jobs_;
  bool stopping_ = false;
  bool running_ = false;
  uint64_t requested_ = 0;  // samples asked for: the thread takes one while taken_ < requested_
  uint64_t started_ = 0;    // samples begun
  uint64_t taken_ = 0;      // samples finished
  State state_;
  std::thread thread_;
};

}  // namespace accel::agent
