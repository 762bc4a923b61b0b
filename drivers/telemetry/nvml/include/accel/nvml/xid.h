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
// The classes (the table in README.md, with its source): an application
// fault is the job's own doing and is recorded with the job; a hardware fault
// means the GPU needs an operator; any other code is recorded only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace accel::nvml {

struct XidReport {
  uint32_t code = 0;
  // The device as the line names it: "dddd:bb:dd", lower case (the driver
  // gives no PCI function).
  std::string device;
  std::optional<uint32_t> pid;  // unset: not given, or '<unknown>'
  std::string process;          // name=, at most kMaxProcess printable bytes; empty: not given
  std::string text;             // the rest of the line, at most kMaxText printable bytes
  bool operator==(const XidReport&) const = default;

  static constexpr size_t kMaxProcess = 64;
  static constexpr size_t kMaxText = 256;
  static constexpr size_t kMaxLine = 8192;  // longer lines are not read
};

// The Xid report in `line` (a kernel log message, with or without a
// /dev/kmsg record's "prio,seq,usec,flags;" prefix); unset when the line is
// no well-formed Xid report.
std::optional<XidReport> parseXidLine(std::string_view line);

enum class XidClass { kApplication, kHardware, kOther };
XidClass classifyXid(uint32_t code);
const char* xidClassName(XidClass c);  // "application", "hardware", "other"

// Whether the report's device is the GPU at `bus_id` ("dddd:bb:dd.f", as
// telemetry::normalizePciBusId writes it).
bool isDevice(const XidReport& report, std::string_view bus_id);

}  // namespace accel::nvml
