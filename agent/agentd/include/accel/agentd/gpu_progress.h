#pragma once
// When a running job's GPU figures go to the aggregator (GpuProgress events,
// schemas/events.fbs), so that `accelctl report` shows them while the job
// runs: at the job's first sample, again at its second (the first with an
// energy figure), then at most once per period (a minute) and only when the
// job was sampled since. Each event carries the job's figures so far, whole:
// the aggregator keeps the latest and a dropped one costs nothing but
// freshness. Pure bookkeeping: the caller passes the sampler's snapshots and
// the time, and publishes what comes back.
#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

#include "accel/agent/job_telemetry.h"
#include "accel/events/event.h"

namespace accel::agentd {

class GpuProgressPacer {
 public:
  using Clock = std::chrono::steady_clock;
  explicit GpuProgressPacer(std::chrono::milliseconds period = std::chrono::minutes(1))
      : period_(period) {}

  // The events due now for `jobs` (every job accounted now); `interval` is
  // TelemetryInterval, which turns idle samples into seconds. Jobs no longer
  // listed are forgotten.
  std::vector<event::GpuProgress> due(const std::vector<agent::JobFigures>& jobs,
                                      Clock::time_point now, std::chrono::milliseconds interval);

 private:
  struct Sent {
    uint64_t samples = 0;
    Clock::time_point at;
  };
  std::chrono::milliseconds period_;
  std::map<uint32_t, Sent> sent_;
};

}  // namespace accel::agentd
