#pragma once
// What the agent asks slurmctld (through libslurm) about a job. The Prolog's
// environment does not carry the task count, and the SPANK plugin cannot see
// it at submission, yet an IPU job needs one GCD per task on the node.
#include <chrono>
#include <cstdint>
#include <string>

#include "accel/common/result.h"

namespace accel::agentd {

// Tasks of the job on one node: --ntasks-per-node when given, else the job's
// tasks spread evenly over its nodes (rounded up), at least 1. Errors:
// kUnavailable when slurmctld cannot answer, kNotFound for an unknown job.
Result<uint32_t> tasksOnNode(uint32_t job_id);

// tasksOnNode run in a child process (`agentd_path --job-tasks JOB`), so a
// libslurm failure cannot end the caller. Bounded by `timeout`.
Result<uint32_t> tasksOnNodeIsolated(const std::string& agentd_path, uint32_t job_id,
                                     std::chrono::milliseconds timeout);

// The arithmetic of tasksOnNode, for tests. 0 or NO_VAL inputs mean "not set".
uint32_t tasksPerNode(uint32_t num_tasks, uint32_t num_nodes, uint32_t ntasks_per_node);

}  // namespace accel::agentd
