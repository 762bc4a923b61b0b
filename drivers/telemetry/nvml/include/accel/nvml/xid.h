#pragma once
// NVIDIA's Xid reports, as the driver writes them into the kernel log:
//   NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
//   NVRM: Xid (PCI:0000:86:00): 13, pid=24581, name=python3, Graphics SM Warp Exception ...
//   NVRM: Xid (PCI:0000:06:00): 31, Ch 00000008, intr 10000000. MMU Fault: ...
// (the pid and name are absent from older drivers' lines). A line comes from
// /dev/kmsg, which any process of the node may add to through /dev/kmsg or
// syslog: it is read as hostile input, bounded and checked, never trusted to
// name a job by itself.
//
// The report is the telemetry seam's (telemetry::XidReport, xid_report.h);
// what is NVIDIA's stays here: the line format and the table of codes (in
// README.md, with its source) that sorts a code into a telemetry::XidClass.
#include <cstdint>
#include <optional>
#include <string_view>

#include "accel/telemetry/xid_report.h"

namespace accel::nvml {

// The Xid report in `line` (a kernel log message, with or without a
// /dev/kmsg record's "prio,seq,usec,flags;" prefix); unset when the line is
// no well-formed Xid report, or longer than telemetry::XidReport::kMaxLine.
std::optional<telemetry::XidReport> parseXidLine(std::string_view line);

// The class of an Xid code by NVIDIA's catalogue.
telemetry::XidClass classifyXid(uint32_t code);

}  // namespace accel::nvml
