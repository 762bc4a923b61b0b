#include "accel/common/notify.h"

#include <systemd/sd-daemon.h>

namespace accel::notify {

void ready(const std::string& s) { sd_notifyf(0, "READY=1\nSTATUS=%s", s.c_str()); }
void status(const std::string& s) { sd_notifyf(0, "STATUS=%s", s.c_str()); }
void reloading() { sd_notify(0, "RELOADING=1"); }
void stopping() { sd_notify(0, "STOPPING=1"); }
void watchdog() { sd_notify(0, "WATCHDOG=1"); }

std::chrono::microseconds watchdogInterval() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0) return std::chrono::microseconds(0);
  return std::chrono::microseconds(usec / 2);
}

}  // namespace accel::notify
