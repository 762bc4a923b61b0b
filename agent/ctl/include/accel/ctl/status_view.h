#pragma once
// `accelctl status`: the daemon's StatusInfo as a table for a terminal and
// as JSON. Pure functions of the reply and the time now, so tests feed them
// literal replies.
#include <cstdint>
#include <string>
#include <vector>

namespace accel::control {
struct StatusInfo;
}

namespace accel::ctl {

// Node faults younger than this make the node look unwell at a glance.
constexpr int64_t kRecentErrorNs = int64_t{3600} * 1'000'000'000;

// What needs an operator's eye, one line each; empty: the node is healthy.
// Looks at: a refused reload, a vendor client whose last call failed, an
// aggregator link that is down, dropped events, node faults in the last hour.
std::vector<std::string> statusProblems(const control::StatusInfo& s, int64_t now_ns);

// The --json document (two-space indent, keys sorted, ends with a newline).
std::string statusJson(const control::StatusInfo& s, int64_t now_ns);

// The table: one line per subject, a first line saying healthy or not.
std::string statusTable(const control::StatusInfo& s, int64_t now_ns);

// Local time as 2026-11-22T10:41:02; "-" for 0.
std::string timeText(int64_t ns);

}  // namespace accel::ctl
