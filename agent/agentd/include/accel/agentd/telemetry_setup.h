#pragma once
// The real telemetry source of accel-agentd: NVML through the adapter of
// drivers/telemetry/nvml, loaded with dlopen at run time. Defined in
// telemetry_setup.cpp, which only the executable compiles (like vendors.cpp):
// the daemon's library sees the telemetry seam alone.
#include <memory>
#include <string>

#include "accel/agentd/gpu_xids.h"
#include "accel/common/result.h"
#include "accel/telemetry/telemetry_source.h"

namespace accel::agentd {

// Errors: "no NVML: ..." when the library is absent or cannot be
// initialized (a node without the NVIDIA driver).
Result<std::unique_ptr<telemetry::TelemetrySource>> openNvml(const std::string& library);

// The Xid parser and table of the NVML adapter (nvml/xid.h): what the
// daemon's XidMonitor reads the kernel log with.
XidDecoder nvmlXidDecoder();

}  // namespace accel::agentd
