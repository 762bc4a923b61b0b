#pragma once
// What the daemon asks slurmctld about a job and its node, each question in
// a child process (`accel-agentd --job-presence` / `--drain-node`, answered
// through the Slurmctld of slurmctld.h): libslurm may end its process, and
// may wait long for a slurmctld that does not answer. Never on a hook's path.
#include <chrono>
#include <cstdint>
#include <string>

#include "accel/agentd/slurmctld.h"
#include "accel/common/result.h"

namespace accel::agentd {

// Slurmctld::jobPresence in a child process (`agentd_path --job-presence
// JOB`), bounded by `timeout`, so a libslurm failure cannot end the caller.
Result<JobPresence> jobPresenceIsolated(const std::string& agentd_path, uint32_t job_id,
                                        std::chrono::milliseconds timeout);

// Slurmctld::drainNode in a child process (`agentd_path --drain-node NODE
// REASON`), bounded by `timeout`.
Status drainNodeIsolated(const std::string& agentd_path, const std::string& node,
                         const std::string& reason, std::chrono::milliseconds timeout);

// Slurmctld::signalJob in a child process (`agentd_path --signal-job JOB
// SIG steps|full`), bounded by `timeout`.
Status signalJobIsolated(const std::string& agentd_path, uint32_t job_id, int sig, bool steps_only,
                         std::chrono::milliseconds timeout);

// Tells the job `line` (`agentd_path --tell-job JOB LINE file|sruns`): the
// child asks slurmctld for the job's output file and user, becomes the user
// and appends (job_output.h); a job with no file (interactive) is, with
// `to_sruns`, sent the line through slurmctld, which its srun or salloc
// prints. True: the file got it, or slurmctld took it; false: the job has no
// file and `to_sruns` is off. Bounded by `timeout`.
Result<bool> tellJobIsolated(const std::string& agentd_path, uint32_t job_id,
                             const std::string& line, bool to_sruns,
                             std::chrono::milliseconds timeout);

}  // namespace accel::agentd
