#pragma once
// Which Slurm job a process belongs to, from its cgroup: Slurm's
// proctrack/cgroup and task/cgroup put every process of a job below a cgroup
// named job_<id> (v1: .../slurm/uid_<uid>/job_<id>/step_<n>; v2:
// .../job_<id>/step_<n>/user/task_<n>). Enough to attribute a process's GPU
// memory to a job; signalling a job's processes checks more (agentd's
// job_processes.h).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace accel::agent {

// The job id of the first "job_<digits>" path component in the text of a
// /proc/PID/cgroup file (lines "ID:CONTROLLERS:PATH"). Unset when no line
// names one, or the text is not such a file.
std::optional<uint32_t> jobIdFromCgroup(std::string_view text);

// Reads <proc_root>/<pid>/cgroup. Unset when the process is gone or is in no
// job. `proc_root` is a setting so tests can point it at a fixture tree.
std::optional<uint32_t> jobOfPid(uint32_t pid, const std::string& proc_root = "/proc");

}  // namespace accel::agent
