// What systemd's STATUS= says of the node (`systemctl status accel-agentd`):
// its jobs, its devices in use, the event outbox and the last error. Workers
// mark it dirty from any thread; the loop publishes it at most once a second.
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>

#include "accel/agentd/daemon.h"
#include "accel/common/notify.h"
#include "accel/events/outbox.h"

namespace accel::agentd {

using namespace std::chrono_literals;

// A worker changed something: the loop publishes the status (at most once a
// second). While a wake-up is pending, further changes need none.
void Daemon::markStatusDirty() {
  if (!status_dirty_.exchange(true)) {
    uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
  }
}

void Daemon::armStatusTimer(std::chrono::nanoseconds after) {
  itimerspec its{};
  auto ns = std::max<int64_t>(after.count(), 1);
  its.it_value.tv_sec = ns / 1'000'000'000;
  its.it_value.tv_nsec = ns % 1'000'000'000;
  timerfd_settime(status_timer_fd_, 0, &its, nullptr);
  status_timer_armed_ = true;
}

// Called in the loop when a worker changed something: publish now if the
// last update is a second old, else once that second is up.
void Daemon::onStatusDirty() {
  uint64_t n = 0;
  (void)!read(wake_fd_, &n, sizeof n);
  if (status_timer_armed_) return;
  auto since = std::chrono::steady_clock::now() - last_status_;
  if (since >= 1s)
    publishStatus();
  else
    armStatusTimer(1s - since);
}

void Daemon::publishStatus() {
  status_timer_armed_ = false;
  status_dirty_ = false;  // before reading: a change made from here on wakes the loop again
  last_status_ = std::chrono::steady_clock::now();
  noteReserves();
  auto st = manager_->stats();
  notify::status(std::to_string(st.jobs) + " job(s), " + std::to_string(st.devices_in_use) + "/" +
                 std::to_string(st.devices_total) + " devices in use; " +
                 event::describe(outbox_->stats()) +
                 (st.last_errors.empty() ? "" : "; last error: " + st.last_errors.back()));
}

}  // namespace accel::agentd
