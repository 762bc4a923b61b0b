#pragma once
// The clock the agent keeps job times on (appliance budgets, limit
// deadlines, observations of the appliance). Its wall time is nanoseconds
// since the epoch, so persisted times keep their meaning across a restart;
// but after the first reading it advances with CLOCK_BOOTTIME, which no step
// of the wall clock moves (an NTP step, an operator's `date`). A step while
// the daemon runs therefore moves no deadline; the next start reads the wall
// clock afresh. Its monotonic time is CLOCK_BOOTTIME.
#include <cstdint>

#include "accel/common/clock.h"

namespace accel::agentd {

// Lives for the whole process.
const Clock& jobClock();

// jobClock().wallNs().
int64_t jobClockNs();

}  // namespace accel::agentd
