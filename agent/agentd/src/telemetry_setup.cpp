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
  d.parse = [](std::string_view line) -> std::optional<XidLine> {
    auto r = nvml::parseXidLine(line);
    if (!r) return std::nullopt;
    return XidLine{r->code, r->device, r->pid, r->text};
  };
  d.classify = [](uint32_t code) {
    switch (nvml::classifyXid(code)) {
      case nvml::XidClass::kApplication:
        return XidClass::kApplication;
      case nvml::XidClass::kHardware:
        return XidClass::kHardware;
      case nvml::XidClass::kOther:
        break;
    }
    return XidClass::kOther;
  };
  return d;
}

}  // namespace accel::agentd
