#pragma once
// The aggregator's JobRuns (accel/aggregator/job_runs.h) through libslurm:
// slurm_load_job, asked of slurmctld. No Slurm header leaks out of this
// adapter; only accel-aggregatord's entry point links it.
#include <string>

#include "accel/aggregator/job_runs.h"

namespace accel::slurm {

class SlurmctldJobRuns : public aggregator::JobRuns {
 public:
  // `slurm_conf`: path of slurm.conf, empty for Slurm's default. libslurm is
  // started at the first lookup, on the caller's thread.
  explicit SlurmctldJobRuns(std::string slurm_conf);

  // One call at a time (the aggregator has one lookup thread).
  Result<aggregator::JobRun> currentRun(uint32_t job_id) override;

 private:
  std::string slurm_conf_;
};

}  // namespace accel::slurm
