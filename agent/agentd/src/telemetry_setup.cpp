// The composition root's GPU telemetry: the NVML adapter
// (drivers/telemetry/nvml), which only the accel-agentd executable links.
#include "accel/agentd/telemetry_setup.h"

#include "accel/nvml/nvml_source.h"
#include "accel/nvml/xid.h"

namespace accel::agentd {

Result<std::unique_ptr<telemetry::TelemetrySource>> openNvml(const std::string& library) {
  auto source = nvml::NvmlSource::open(library);
  if (!source.ok()) return source.error();
  return std::unique_ptr<telemetry::TelemetrySource>(std::move(*source));
}

XidDecoder nvmlXidDecoder() {
  XidDecoder d;
  d.parse = nvml::parseXidLine;
  d.classify = nvml::classifyXid;
  return d;
}

}  // namespace accel::agentd
