#include "accel/events/reconnect_backoff.h"

#include <algorithm>

namespace accel::event {

ReconnectBackoff::ReconnectBackoff(ms min, ms max, uint64_t seed)
    : min_(std::max(min, ms(1))), max_(std::max(max, min_)), bound_(min_), rng_(seed) {}

ReconnectBackoff::ms ReconnectBackoff::next() {
  const int64_t hi = bound_.count();
  std::uniform_int_distribution<int64_t> pick(hi - hi / 2, hi);
  ms wait(pick(rng_));
  bound_ = std::min(bound_ * 2, max_);
  return wait;
}

}  // namespace accel::event
