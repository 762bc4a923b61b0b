#pragma once
// NvmlSource: the telemetry seam over NVML, the GPU adapter. It lists the
// devices once when opened (index, PCI bus id, UUID) and reads each of them
// per sample: utilization first, then memory, the energy counter and the
// compute processes.
#include <memory>
#include <string>
#include <vector>

#include "accel/common/result.h"
#include "accel/nvml/nvml_library.h"
#include "accel/telemetry/telemetry_source.h"

namespace accel::nvml {

class NvmlSource : public telemetry::TelemetrySource {
 public:
  // Loads and initializes NVML from `library` and lists its devices.
  // Errors: those of NvmlLibrary::open (kNotFound "no NVML: ..." when the
  // library is not there), and kUnavailable when the device count or a
  // device's handle cannot be read. A device whose bus id or UUID cannot be
  // read is kept, with the reason in its `error`.
  // More than kMaxDevices devices is no node NVML describes truthfully
  // (kUnavailable). A UUID that is not printable ASCII is dropped with an
  // error on the device.
  static Result<std::unique_ptr<NvmlSource>> open(const std::string& library);
  static constexpr unsigned kMaxDevices = 64;

  // A field NVML does not support on a device (NOT_SUPPORTED) is left unset
  // without an error; other failures are named in the reading's `error`.
  // Fails as a whole (kUnavailable) only when NVML says it is no longer
  // initialized.
  Result<std::vector<telemetry::DeviceReading>> sample() override;
  std::vector<telemetry::DeviceReading> devices() const override { return devices_; }
  std::string describe() const override;

 private:
  NvmlSource(std::string library, std::unique_ptr<NvmlLibrary> nvml,
             std::vector<nvml_device_t> handles, std::vector<telemetry::DeviceReading> devices);
  // Reads one device into `reading`; false when NVML is no longer initialized.
  bool read(nvml_device_t handle, telemetry::DeviceReading& reading);

  std::string library_;
  std::unique_ptr<NvmlLibrary> nvml_;
  std::vector<nvml_device_t> handles_;
  std::vector<telemetry::DeviceReading> devices_;  // identity only
};

}  // namespace accel::nvml
