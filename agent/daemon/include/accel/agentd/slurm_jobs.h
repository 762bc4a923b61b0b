#pragma once
// What the agent asks slurmctld (through libslurm) about a job and its node:
// whether a job still lives, and draining the node. Never on a hook's path.
#include <chrono>
#include <cstdint>
#include <string>

#include "accel/common/result.h"

namespace accel::agentd {

// Whether a job the agent holds a record of still lives, as slurmctld sees
// it. kGone only on a definite answer: slurmctld no longer knows the job, or
// the job has ended (or was requeued) and is not completing. A completing job
// is kAlive: its epilog is still to come. (A job requeued and already running
// again elsewhere counts as alive; the node name the agent knows need not be
// Slurm's, and a wrong "gone" would tear down a running job.)
// kUnknown: slurmctld answered "invalid job id". A slurmctld that lost its
// state (or a confused one) says that of running jobs too, so the answer
// alone never ends a job: the sweep asks again later (stale_jobs.h).
enum class JobPresence { kAlive, kGone, kUnknown };

// Asks slurmctld (libslurm, in this process). Errors: kUnavailable when
// slurmctld cannot answer.
Result<JobPresence> jobPresence(uint32_t job_id);

// jobPresence in a child process (`agentd_path --job-presence JOB`),
// bounded by `timeout`, so a libslurm failure cannot end the caller.
Result<JobPresence> jobPresenceIsolated(const std::string& agentd_path, uint32_t job_id,
                                        std::chrono::milliseconds timeout);

// Drains `node` in slurmctld with `reason` (slurm_update_node, as root or
// SlurmUser; the reason's user is this process's). A node already drained
// keeps draining, with this reason. Errors: kUnavailable when slurmctld
// cannot answer, kPermissionDenied when it refuses the caller, kNotFound for
// a node it does not know, else kUnavailable.
Status drainNode(const std::string& node, const std::string& reason);

// drainNode in a child process (`agentd_path --drain-node NODE REASON`),
// bounded by `timeout`: libslurm may end its process, and may wait long
// for a slurmctld that does not answer.
Status drainNodeIsolated(const std::string& agentd_path, const std::string& node,
                         const std::string& reason, std::chrono::milliseconds timeout);

// The decision of jobPresence from the job_state slurmctld reported (as in
// slurm_job_info_t), for tests.
JobPresence presenceFromState(uint32_t job_state);

}  // namespace accel::agentd
