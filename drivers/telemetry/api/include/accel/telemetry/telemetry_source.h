#pragma once
// The telemetry seam: what a node's accelerators are doing now, read from the
// vendor's management library. The interface and its value types are the
// target accel_telemetry_api, which agent/telemetry links; the GPU adapter is
// NvmlSource (accel_nvml, drivers/telemetry/nvml), wired in by accel-agentd's
// composition root. An IPU or appliance source implements the same interface.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/result.h"

namespace accel::telemetry {

// One process that holds memory on a device. memory_bytes is unset when the
// library does not report it (NVML does not under some drivers).
struct ProcessUsage {
  uint32_t pid = 0;
  std::optional<uint64_t> memory_bytes;
};

// One reading of one device. A field the device does not support, or whose
// read failed, is unset; `error` then says which call failed and why (empty:
// every supported field was read). The device itself is always named.
struct DeviceReading {
  uint32_t index = 0;                       // the library's device index
  std::string pci_bus_id;                   // normalized: "0000:00:06.0" (see normalizePciBusId)
  std::string uuid;                         // e.g. "GPU-4f157061-...", empty when not known
  std::optional<uint32_t> utilization_pct;  // SM busy time over the library's last period
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_total_bytes;
  std::optional<uint64_t> energy_mj;  // the device's total-energy counter (monotonic)
  std::vector<ProcessUsage> processes;
  bool processes_read = false;  // false: the list could not be read (not "no process")
  std::string error;
};

class TelemetrySource {
 public:
  virtual ~TelemetrySource() = default;
  // Reads every device once. Devices are in index order. Errors: the source
  // as a whole cannot be read any more (kUnavailable), the message naming
  // the call and the library's reason. A failure of one field of one device
  // is not an error here: it is in that reading's `error`.
  virtual Result<std::vector<DeviceReading>> sample() = 0;
  // The devices the source found when it was opened, without readings.
  virtual std::vector<DeviceReading> devices() const = 0;
  // One line for people: "NVML (libnvidia-ml.so.1), 8 GPUs".
  virtual std::string describe() const = 0;
};

// A PCI address in the form hwloc and the kernel write it,
// "dddd:bb:dd.f" in lower case, from either that form or NVML's
// ("00000000:00:06.0", an 8-digit domain, any case). Unset when `text` is not
// a PCI address (or its domain does not fit 16 bits).
std::optional<std::string> normalizePciBusId(std::string_view text);

}  // namespace accel::telemetry
