// Xid reports on arbitrary kernel log text (anyone on the node can write
// there): whatever parses has a well-formed device, bounded printable fields
// and a pid only when one was given, and parsing never reads past the line.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "accel/nvml/xid.h"
#include "accel/telemetry/xid_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of its own size, so that a read past the end is ASan's to see.
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto r = accel::nvml::parseXidLine(text);
  if (!r) return 0;
  if (r->device.size() != 10 || r->device[4] != ':' || r->device[7] != ':') std::abort();
  if (r->process.size() > accel::telemetry::XidReport::kMaxProcess) std::abort();
  if (r->text.size() > accel::telemetry::XidReport::kMaxText) std::abort();
  for (char c : r->process + r->text)
    if (c < 0x20 || c > 0x7e) std::abort();
  if (r->pid && *r->pid == 0) std::abort();
  if (!accel::telemetry::isDevice(*r, r->device + ".0")) std::abort();
  (void)accel::telemetry::xidClassName(accel::nvml::classifyXid(r->code));
  return 0;
}
