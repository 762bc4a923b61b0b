#include "accel/telemetry/xid_report.h"

namespace accel::telemetry {

const char* xidClassName(XidClass c) {
  switch (c) {
    case XidClass::kApplication:
      return "application";
    case XidClass::kHardware:
      return "hardware";
    case XidClass::kOther:
      return "other";
  }
  return "other";
}

bool isDevice(const XidReport& report, std::string_view bus_id) {
  return !report.device.empty() && bus_id.size() == report.device.size() + 2 &&
         bus_id.starts_with(report.device) && bus_id[report.device.size()] == '.';
}

}  // namespace accel::telemetry
