#pragma once
// systemd's notification protocol (sd_notify) for both daemons, the only place
// libsystemd's daemon header is used. Every call is a no-op when not run by
// systemd (NOTIFY_SOCKET unset), so the same binaries run in the test sandbox.
#include <chrono>
#include <string>

namespace accel::notify {

void ready(const std::string& status);  // READY=1 with a STATUS= line
void status(const std::string& status);
void reloading();
void stopping();
void watchdog();
// Half of WatchdogSec when systemd asked for pings; zero otherwise.
std::chrono::microseconds watchdogInterval();

}  // namespace accel::notify
