#pragma once
// What the earlier runs of a requeued job used of its appliance time limit,
// for ApplianceTimeOnRequeue=cumulative: read from the job's summaries in
// Slurm accounting (the accel= segment of AdminComment, written by
// accel-aggregatord after each run), where every node of the job can find
// it, whichever nodes the earlier runs had.
#include <cstdint>
#include <string_view>

#include "accel/common/result.h"

namespace accel::agentd {

// `sacct -n -P -D -X -o AdminComment` output: one line per run of the job.
// The largest appliance_s among their accel= summaries, in ns (the summary's
// appliance_s is the sum over the runs it has seen). kNotFound when no line
// holds a summary; a damaged summary is skipped.
Result<int64_t> earlierRunsUsedNs(std::string_view sacct_output);

// Runs sacct for `job_id` (from PATH, with the daemon's environment, so its
// SLURM_CONF), bounded by `timeout_ms`, and reads its output as above.
Result<int64_t> earlierRunsUsedNsFromAccounting(uint32_t job_id, int timeout_ms);

}  // namespace accel::agentd
