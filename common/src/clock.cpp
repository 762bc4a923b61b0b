#include "accel/common/clock.h"

#include <thread>

namespace accel {
namespace {

class SystemClock final : public Clock {
 public:
  int64_t wallNs() const override { return accel::wallNs(); }
  int64_t monoNs() const override { return accel::monoNs(); }
  void sleepFor(std::chrono::nanoseconds d) const override { std::this_thread::sleep_for(d); }
};

}  // namespace

const Clock& systemClock() {
  static const SystemClock clock;
  return clock;
}

}  // namespace accel
