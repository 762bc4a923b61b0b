#pragma once
// The start time of a process, from /proc/PID/stat. With the pid it names one
// process for good: a later process that reuses the pid starts later. Used by
// the SPANK plugin (it reports each task's) and by accel-agentd (it checks a
// task is still the one reported before signalling it).
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "accel/common/result.h"

namespace accel {

// Field 22 (starttime, in clock ticks since boot) of the text of a
// /proc/PID/stat file. The second field is the command name in parentheses,
// which may itself hold spaces and ')' ("(a) b)"), so fields are counted from
// the last ')'. Errors (kParse) for truncated or malformed text.
Result<std::uint64_t> parseStartTicks(std::string_view stat);

// Reads <proc_root>/<pid>/stat and parses it. kNotFound when the process is
// gone. `proc_root` is a setting so tests can point it at a fixture tree.
Result<std::uint64_t> readStartTicks(pid_t pid, const std::string& proc_root = "/proc");

}  // namespace accel
