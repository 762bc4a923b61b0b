#pragma once
// The seam to slurmctld for the aggregator: which run of a job is the
// current one, and on which nodes. A target of its own (accel_aggregator_api)
// without any Slurm header, like accounting.h: slurm::SlurmctldJobRuns
// (slurm/accounting/) implements it through libslurm; the aggregator's unit
// tests fake it.
//
// The aggregator asks before it counts a new run of a requeued job: a node's
// key speaks for the jobs that ran on that node, and only slurmctld knows
// where a job runs now.
#include <cstdint>
#include <string>
#include <vector>

#include "accel/common/result.h"

namespace accel::aggregator {

// What slurmctld holds of a job's current run.
struct JobRun {
  // How often the job was requeued before this run (restart_cnt; the
  // SLURM_JOB_RESTART_COUNT of this run's prologs).
  uint32_t restart_count = 0;
  // The run has its nodes: the job is not pending (again). A job that has
  // ended keeps the nodes of its last run.
  bool started = false;
  // The nodes of that run, one name each; empty while pending, and when the
  // list slurmctld gave cannot be read.
  std::vector<std::string> nodes;
  // When the run started (slurmctld's start_time, seconds since the epoch);
  // 0 while pending or when not known. Tells a job that reuses an earlier
  // job's id (MaxJobId wrapped, slurmctld's state lost) from a replay of
  // the earlier job's events: the new one started after the old one ended.
  int64_t start_time_s = 0;
  bool operator==(const JobRun&) const = default;
};

class JobRuns {
 public:
  virtual ~JobRuns() = default;
  // The job's current run, as slurmctld sees it now. May block for as long
  // as slurmctld takes to answer (MessageTimeout). Errors: kNotFound
  // (slurmctld does not know the job: never submitted, or purged after
  // MinJobAge), kUnavailable (slurmctld cannot be reached: ask again later).
  virtual Result<JobRun> currentRun(uint32_t job_id) = 0;
};

}  // namespace accel::aggregator
