#pragma once
// systemd notification (Type=notify): READY, STATUS, WATCHDOG, STOPPING.
// A small copy of the agent's helper: linking accel_agentd_lib for four
// calls would pull the agent's drivers into the aggregator.
#include <chrono>
#include <string>

namespace accel::aggregator::notify {

void ready(const std::string& status);
void status(const std::string& status);
void stopping();
void watchdog();
// Half of WatchdogSec= when systemd asks for pings; zero otherwise.
std::chrono::microseconds watchdogInterval();

}  // namespace accel::aggregator::notify
