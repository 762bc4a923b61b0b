#pragma once
// The clock the agent keeps job times on (appliance budgets, limit
// deadlines, observations of the appliance). Its values are wall-clock
// nanoseconds since the epoch, so persisted times keep their meaning across
// a restart; but after the first reading it advances with CLOCK_BOOTTIME,
// which no step of the wall clock moves (an NTP step, an operator's `date`).
// A step while the daemon runs therefore moves no deadline; the next start
// reads the wall clock afresh.
#include <cstdint>

namespace accel::agentd {

int64_t jobClockNs();

// How long until `deadline_ns` (a jobClockNs() value), in ns; <= 0: due.
inline int64_t jobClockUntil(int64_t deadline_ns) { return deadline_ns - jobClockNs(); }

}  // namespace accel::agentd
