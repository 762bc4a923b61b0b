#include "accel/slurm/slurmctld_job_runs.h"

#include <slurm/slurm_errno.h>

#include <memory>

#include "accel/common/hostlist.h"
#include "accel/slurm/slurm_compat.h"
#include "libslurm_init.h"

namespace accel::slurm {

using aggregator::JobRun;

SlurmctldJobRuns::SlurmctldJobRuns(std::string slurm_conf) : slurm_conf_(std::move(slurm_conf)) {}

Result<JobRun> SlurmctldJobRuns::currentRun(uint32_t job_id) {
  initLibslurm(slurm_conf_);
  const std::string job = "slurmctld: job " + std::to_string(job_id);
  job_info_msg_t* msg = nullptr;
  if (slurm_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS) {
    const int err = errno;
    return Error(err == ESLURM_INVALID_JOB_ID ? ErrorCode::kNotFound : ErrorCode::kUnavailable,
                 job + ": " + slurm_strerror(err));
  }
  std::unique_ptr<job_info_msg_t, void (*)(job_info_msg_t*)> guard(msg, slurm_free_job_info_msg);
  // An array's or a heterogeneous job's id can bring its other jobs along:
  // the record of this very id is the one.
  const slurm_job_info_t* record = nullptr;
  for (uint32_t i = 0; msg != nullptr && i < msg->record_count; ++i)
    if (msg->job_array[i].job_id == job_id) record = &msg->job_array[i];
  if (record == nullptr) return Error(ErrorCode::kNotFound, job + ": not found");
  JobRun run;
  run.restart_count = record->restart_cnt;
  run.started = (record->job_state & JOB_STATE_BASE) != JOB_PENDING;
  if (run.started) run.start_time_s = static_cast<int64_t>(record->start_time);
  // A list the aggregator cannot read (expandHostlist's limits) confirms no
  // node: the run's events stay uncounted rather than counted for anyone.
  if (run.started && record->nodes != nullptr)
    if (auto names = expandHostlist(record->nodes); names.ok()) run.nodes = std::move(*names);
  return run;
}

}  // namespace accel::slurm
