#include "accel/agentd/job_clock.h"

#include <time.h>

#include <thread>

namespace accel::agentd {
namespace {

int64_t readNs(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

struct Anchor {
  int64_t wall = readNs(CLOCK_REALTIME);
  int64_t boot = readNs(CLOCK_BOOTTIME);
};

class JobClock final : public Clock {
 public:
  // The wall clock is read once, at the first call.
  int64_t wallNs() const override {
    static const Anchor anchor;
    return anchor.wall + (readNs(CLOCK_BOOTTIME) - anchor.boot);
  }
  int64_t monoNs() const override { return readNs(CLOCK_BOOTTIME); }
  void sleepFor(std::chrono::nanoseconds d) const override { std::this_thread::sleep_for(d); }
};

}  // namespace

const Clock& jobClock() {
  static const JobClock clock;
  return clock;
}

int64_t jobClockNs() { return jobClock().wallNs(); }

}  // namespace accel::agentd
