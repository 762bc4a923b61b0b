// The node's heartbeat: a node_heartbeat event at start and every
// HeartbeatInterval, sent from the daemon's loop (a timerfd), so that the
// aggregator can tell a node that is alive from one that went quiet.
#include <sys/timerfd.h>
#include <unistd.h>

#include "accel/agentd/daemon.h"

namespace accel::agentd {

// A heartbeat now, then every HeartbeatInterval (0: none). Sending the first
// at once tells the aggregator the node's interval and figures from its
// start, not what it last heard before a restart.
void Daemon::armHeartbeat() {
  itimerspec its{};
  its.it_interval.tv_sec = config_.heartbeat_interval.count();
  its.it_value = its.it_interval;
  timerfd_settime(heartbeat_fd_, 0, &its, nullptr);
  if (its.it_interval.tv_sec > 0) sendHeartbeat();
}

void Daemon::onHeartbeatTimer() {
  uint64_t ticks = 0;
  (void)!read(heartbeat_fd_, &ticks, sizeof(ticks));
  sendHeartbeat();
  // Stray GPU processes reach the log and the status without waiting for a hook.
  if (telemetry_) telemetry_->reportStrays(health_.get());
}

void Daemon::sendHeartbeat() {
  auto st = manager_->stats();
  event::NodeHeartbeat hb{.accelerators = static_cast<uint32_t>(st.devices_total),
                          .accelerators_busy = static_cast<uint32_t>(st.devices_in_use),
                          .jobs = static_cast<uint32_t>(st.jobs),
                          .backlog = outbox_->stats().backlog,
                          .interval_s = static_cast<uint32_t>(config_.heartbeat_interval.count())};
  // The kind of work the node serves: IPUs behind a V-IPU controller, its
  // own devices (the first one's kind), or an appliance.
  if (vendors_.ipu) {
    hb.accel_kind = "ipu";
  } else if (auto use = manager_->deviceUse(); !use.empty()) {
    hb.accel_kind = use.front().kind;
  } else if (vendors_.appliance) {
    hb.accel_kind = "appliance";
  }
  // Telemetry: a full spool drops it, which is the policy, not an error.
  (void)outbox_->publish(hb);
}

}  // namespace accel::agentd
