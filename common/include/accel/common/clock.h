#pragma once
// The clocks, read as nanoseconds. Wall time (CLOCK_REALTIME) for moments that
// other processes and hosts read: records, events, accounting. Monotonic time
// (CLOCK_MONOTONIC) for durations and deadlines, which a clock step must not bend.
//
// Code whose behaviour depends on time takes a `const Clock&` rather than
// reading the clocks itself, so that a test can hand it a clock it moves by
// hand (tests/support/fake_clock.h). systemClock() is the real one; the free
// functions wallNs() and monoNs() read the same clocks directly.
#include <time.h>

#include <chrono>
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

class Clock {
 public:
  virtual ~Clock() = default;

  // Nanoseconds since the epoch, as CLOCK_REALTIME.
  virtual int64_t wallNs() const = 0;
  // Nanoseconds of a clock that only moves forward (no step of the wall
  // clock moves it), for durations and deadlines.
  virtual int64_t monoNs() const = 0;
  // Returns once `d` has passed on this clock.
  virtual void sleepFor(std::chrono::nanoseconds d) const = 0;

  // monoNs() as a steady_clock reading.
  std::chrono::steady_clock::time_point steadyNow() const {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(monoNs()));
  }
};

// CLOCK_REALTIME, CLOCK_MONOTONIC and a real sleep. Lives for the whole process.
const Clock& systemClock();

}  // namespace accel
