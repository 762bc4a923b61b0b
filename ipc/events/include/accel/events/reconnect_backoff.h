#pragma once
// How long the outbox waits before its next attempt to reach the aggregator.
//
// After a lost link or a failed attempt the wait is drawn at random from
// [bound/2, bound]. The bound starts at `min` and doubles with each failed
// attempt up to `max`; a link that comes up resets it. Every wait is at least
// half its bound, so a node that keeps failing really backs off; nodes that
// lost the aggregator at the same instant (it restarted) spread their
// attempts over the other half, so they do not come back as one wave.
#include <chrono>
#include <cstdint>
#include <random>

namespace accel::event {

class ReconnectBackoff {
 public:
  using ms = std::chrono::milliseconds;
  // `min` is raised to 1 ms and `max` to `min`. `seed` gives the sequence of
  // draws (each node seeds from std::random_device; tests pass a number).
  ReconnectBackoff(ms min, ms max, uint64_t seed);

  // The wait before the next attempt; doubles the bound for the one after.
  ms next();
  // A link came up: the next wait is drawn from [min/2, min] again.
  void reset() { bound_ = min_; }
  ms bound() const { return bound_; }

 private:
  ms min_, max_, bound_;
  std::mt19937_64 rng_;
};

}  // namespace accel::event
