#pragma once
// An accel::Clock that moves only when the test moves it, so that deadlines,
// ages and timeouts are tested without sleeping. Header only.
//
// It holds a wall time (ns since the epoch, as CLOCK_REALTIME) and a
// monotonic time (ns, as CLOCK_MONOTONIC or CLOCK_BOOTTIME). advance() is
// time passing: both move by the same amount, and so does sleepFor(), which
// returns at once. stepWall() is the wall clock being set (an NTP step, an
// operator's `date`): only the wall time moves, either way. Reads and moves
// are atomic, so a thread of the code under test may read while the test's
// thread advances. Code under test keeps a reference to it: it must outlive
// that code.
#include <atomic>
#include <chrono>
#include <cstdint>

#include "accel/common/clock.h"

namespace accel::support {

class FakeClock final : public Clock {
 public:
  static constexpr int64_t kSec = 1'000'000'000;
  // 2027-01-15 08:00:00 UTC: far from the real clock, so a reading of the
  // real clock where the fake was meant shows.
  static constexpr int64_t kDefaultWallNs = 1'800'000'000 * kSec;

  explicit FakeClock(int64_t wall_ns = kDefaultWallNs, int64_t mono_ns = 1000 * kSec)
      : wall_ns_(wall_ns), mono_ns_(mono_ns) {}
  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  int64_t wallNs() const override { return wall_ns_.load(); }
  int64_t monoNs() const override { return mono_ns_.load(); }
  // The time slept passes.
  void sleepFor(std::chrono::nanoseconds d) const override { move(d.count()); }

  // Time passes. A negative amount is a test's mistake; it is taken as it is.
  void advance(int64_t ns) { move(ns); }
  template <typename Rep, typename Period>
  void advance(std::chrono::duration<Rep, Period> d) {
    advance(static_cast<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()));
  }
  // Both clocks move by the same amount, so that the wall clock reads
  // `wall_ns`: time passing. A test may also go back, to set the start of a
  // scene before the code under test has read the clock.
  void advanceTo(int64_t wall_ns) { advance(wall_ns - wallNs()); }

  // The wall clock is set; the monotonic time does not move.
  void stepWall(int64_t delta_ns) { wall_ns_ += delta_ns; }

 private:
  // Const so that sleepFor() can move it: the code under test holds a const Clock&.
  void move(int64_t ns) const {
    wall_ns_ += ns;
    mono_ns_ += ns;
  }

  mutable std::atomic<int64_t> wall_ns_;
  mutable std::atomic<int64_t> mono_ns_;
};

}  // namespace accel::support
