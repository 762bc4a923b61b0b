#pragma once
// systemd's notification protocol (sd_notify), the only place libsystemd's
// header is used. Every call is a no-op when not run by systemd
// (NOTIFY_SOCKET unset), so the same binary runs in the test sandbox.
#include <chrono>
#include <string>

namespace accel::agentd::notify {

void ready(const std::string& status);
void status(const std::string& status);
void reloading();
void stopping();
void watchdog();
// Half of WatchdogSec when systemd asked for pings; zero otherwise.
std::chrono::microseconds watchdogInterval();

}  // namespace accel::agentd::notify
