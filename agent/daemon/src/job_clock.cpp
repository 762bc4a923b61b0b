#include "accel/agentd/job_clock.h"

#include <time.h>

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

}  // namespace

int64_t jobClockNs() {
  static const Anchor anchor;
  return anchor.wall + (readNs(CLOCK_BOOTTIME) - anchor.boot);
}

}  // namespace accel::agentd
