#pragma once
// One line appended to a job's output file by the agent, mid-job (the idle
// notice): done in a child process (`accel-agentd --tell-job`, slurm_jobs.h)
// that first becomes the job's user, so the path, which the user chose, is
// never opened with root's rights. Never through /proc/PID/fd.
#include <cstdint>
#include <string>

#include "accel/common/result.h"

namespace accel::agentd {

// Drops this process to `uid` and `gid` for good: supplementary groups to
// `gid` alone, then the gid, then the uid. Errors: a step failed (the
// process must then not go on to touch the user's files). Also refused:
// uid 0 (a root job's output is not written on its behalf).
Status becomeJobUser(uint32_t uid, uint32_t gid);

// Appends `line` and a newline to the regular file at `path` with the
// rights of the caller: opened O_WRONLY|O_APPEND|O_NOFOLLOW|O_NONBLOCK|
// O_NOCTTY (never created, no symlink followed in its last component, no
// wait on a FIFO), and written only when fstat says it is a regular file.
// Errors: kNotFound (no such file), kInvalidArgument (not a regular file, a
// symlink), else kIo.
Status appendLineToFile(const std::string& path, const std::string& line);

}  // namespace accel::agentd
