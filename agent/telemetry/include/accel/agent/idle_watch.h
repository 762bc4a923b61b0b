#pragma once
// The idle decision (IdleAfter): which jobs have had every accelerator at 0%
// for long enough, each told once. It reads a UtilizationSource, so that the
// GPU sampler (NodeTelemetry over JobTelemetry) and, later, an IPU or
// appliance source feed the same decision; it knows no device kind and has
// no thread and no clock: the caller asks it after each round of samples.
#include <chrono>
#include <cstdint>
#include <set>
#include <vector>

#include "accel/agent/job_telemetry.h"

namespace accel::agent {

// One job's accelerators as the source sees them now.
struct JobIdleness {
  uint32_t job_id = 0;
  // The latest samples in a row in which every accelerator of the job that
  // reported its utilization reported 0% (0: busy in the latest, or never read).
  uint64_t idle_samples = 0;
  std::vector<uint32_t> devices;  // the accelerators' indices on the node
};

// What any accelerator kind offers to the idle decision.
class UtilizationSource {
 public:
  virtual ~UtilizationSource() = default;
  // Every job sampled now; a job not listed has ended (or was never sampled).
  virtual std::vector<JobIdleness> idleness() const = 0;
  // The time between two samples: idle_samples times this is the idle time.
  virtual std::chrono::milliseconds sampleInterval() const = 0;
};

// A job that has just passed the threshold.
struct IdleJob {
  uint32_t job_id = 0;
  uint64_t idle_s = 0;  // idle_samples times the interval, whole seconds
  std::vector<uint32_t> devices;
  bool operator==(const IdleJob&) const = default;
};

// The GPU sampler's side of UtilizationSource: the idleness of the jobs
// JobTelemetry accounts, each with the indices of its devices found so far.
std::vector<JobIdleness> idlenessOf(const std::vector<JobFigures>& jobs);

class IdleWatch {
 public:
  // The jobs whose idle time (idle_samples x interval) has reached `after`
  // and that were not returned before: each job once, however long it stays
  // idle and even when it is busy for a while and idle again. A job no longer
  // listed is forgotten, so a later job under its id is judged afresh.
  // `after` of zero turns the decision off: nothing is returned (and nothing
  // is remembered, so turning it on later judges every job from its samples).
  std::vector<IdleJob> check(const std::vector<JobIdleness>& jobs,
                             std::chrono::milliseconds interval, std::chrono::seconds after);

 private:
  std::set<uint32_t> told_;
};

}  // namespace accel::agent
