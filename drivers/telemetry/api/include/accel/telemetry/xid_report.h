#pragma once
// A GPU driver's error report (an Xid) as the agent models it, whatever the
// vendor's words for it: the error code, the device it names, the process
// the driver blamed and the rest of the driver's text, each bounded. The
// kernel log line it is read from, and which code means what, are the
// adapter's (drivers/telemetry/nvml: parseXidLine, classifyXid); this is the
// data both sides of the seam share.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace accel::telemetry {

struct XidReport {
  uint32_t code = 0;
  // The device as the report names it: "dddd:bb:dd", lower case (a bus id
  // without its PCI function).
  std::string device;
  std::optional<uint32_t> pid;  // unset: not given, or not known to the driver
  std::string process;          // at most kMaxProcess printable bytes; empty: not given
  std::string text;             // the driver's words, at most kMaxText printable bytes
  bool operator==(const XidReport&) const = default;

  static constexpr size_t kMaxProcess = 64;
  static constexpr size_t kMaxText = 256;
  static constexpr size_t kMaxLine = 8192;  // longer lines are not read
};

// What a code means for the node: an application fault is the job's own
// doing and is recorded with the job; a hardware fault means the GPU needs
// an operator; any other code is recorded only.
enum class XidClass { kApplication, kHardware, kOther };
const char* xidClassName(XidClass c);  // "application", "hardware", "other"

// Whether the report's device is the GPU at `bus_id` ("dddd:bb:dd.f", as
// normalizePciBusId writes it).
bool isDevice(const XidReport& report, std::string_view bus_id);

}  // namespace accel::telemetry
