#pragma once
// Signals a job's tasks through pidfds. A task is named by pid and start
// time (TaskRef); a process that merely reuses the pid is never hit: the
// start time is checked before the pidfd is opened and again after, and
// once the pidfd is open it can only ever reach that one process.
#include <vector>

#include "accel/agent/job_record.h"

namespace accel::agentd {

// True when the signal went to the very task. False when the task is gone,
// its pid now belongs to another process, or its start time is unknown (0).
bool signalTask(const agent::TaskRef& task, int sig);

// Signals every task; returns how many were reached.
int signalTasks(const std::vector<agent::TaskRef>& tasks, int sig);

}  // namespace accel::agentd
