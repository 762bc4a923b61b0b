#pragma once
// The clocks, read as nanoseconds. Wall time (CLOCK_REALTIME) for moments that
// other processes and hosts read: records, events, accounting. Monotonic time
// (CLOCK_MONOTONIC) for durations and deadlines, which a clock step must not bend.
#include <time.h>

#include <cstdint>

namespace accel {

inline int64_t wallNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

inline int64_t monoNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace accel
