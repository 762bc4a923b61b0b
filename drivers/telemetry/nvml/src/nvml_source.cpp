#include "accel/nvml/nvml_source.h"

#include <algorithm>

namespace accel::nvml {

using telemetry::DeviceReading;
using telemetry::ProcessUsage;

namespace {

void addError(DeviceReading& reading, const Error& error) {
  if (!reading.error.empty()) reading.error += "; ";
  reading.error += error.message();
}

// Keeps a field's value, or notes why it has none. NOT_SUPPORTED is no error:
// the device simply does not have that reading.
template <typename T, typename Store>
void keep(Result<T> result, DeviceReading& reading, Store store) {
  if (result.ok()) {
    store(*result);
  } else if (result.error().code() != ErrorCode::kUnsupported) {
    addError(reading, result.error());
  }
}

// A UUID goes into events, summaries and terminals: printable ASCII only.
bool printable(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

}  // namespace

NvmlSource::NvmlSource(std::string library, std::unique_ptr<NvmlLibrary> nvml,
                       std::vector<nvml_device_t> handles, std::vector<DeviceReading> devices)
    : library_(std::move(library)),
      nvml_(std::move(nvml)),
      handles_(std::move(handles)),
      devices_(std::move(devices)) {}

Result<std::unique_ptr<NvmlSource>> NvmlSource::open(const std::string& library) {
  auto nvml = NvmlLibrary::open(library);
  if (!nvml) return nvml.error();
  auto count = (*nvml)->deviceCount();
  if (!count) return Error(ErrorCode::kUnavailable, count.error().message());
  if (*count > kMaxDevices)
    return Error(ErrorCode::kUnavailable, "nvmlDeviceGetCount_v2: " + std::to_string(*count) +
                                              " devices, more than the " +
                                              std::to_string(kMaxDevices) + " a node can hold");
  std::vector<nvml_device_t> handles;
  std::vector<DeviceReading> devices;
  for (unsigned i = 0; i < *count; ++i) {
    auto handle = (*nvml)->device(i);
    if (!handle) return Error(ErrorCode::kUnavailable, handle.error().message());
    DeviceReading device;
    device.index = i;
    auto bus = (*nvml)->pciBusId(*handle);
    if (bus) {
      auto normal = telemetry::normalizePciBusId(*bus);
      if (normal) {
        device.pci_bus_id = *normal;
      } else {
        device.error = "nvmlDeviceGetPciInfo_v3: not a PCI bus id" +
                       (printable(*bus) ? ": '" + *bus + "'" : std::string());
      }
    } else {
      addError(device, bus.error());
    }
    keep((*nvml)->uuid(*handle), device, [&](const std::string& v) {
      if (printable(v)) {
        device.uuid = v;
      } else {
        addError(device, Error(ErrorCode::kUnavailable, "nvmlDeviceGetUUID: not a UUID"));
      }
    });
    handles.push_back(*handle);
    devices.push_back(std::move(device));
  }
  return std::unique_ptr<NvmlSource>(
      new NvmlSource(library, std::move(*nvml), std::move(handles), std::move(devices)));
}

bool NvmlSource::read(nvml_device_t handle, DeviceReading& reading) {
  keep(nvml_->utilization(handle), reading,
       [&](const NvmlUtilization& v) { reading.utilization_pct = std::min(v.gpu, 100u); });
  if (nvml_->lastReturnCode() == kNvmlErrorUninitialized) return false;
  keep(nvml_->memory(handle), reading, [&](const NvmlMemory& v) {
    reading.memory_used_bytes = v.used;
    reading.memory_total_bytes = v.total;
  });
  keep(nvml_->totalEnergyMj(handle), reading, [&](uint64_t v) { reading.energy_mj = v; });
  keep(nvml_->computeProcesses(handle), reading, [&](const std::vector<NvmlProcessInfo>& list) {
    reading.processes_read = true;
    for (const NvmlProcessInfo& p : list) {
      ProcessUsage usage{.pid = p.pid, .memory_bytes = std::nullopt};
      if (p.used_gpu_memory != kNvmlValueNotAvailable) usage.memory_bytes = p.used_gpu_memory;
      reading.processes.push_back(usage);
    }
  });
  return nvml_->lastReturnCode() != kNvmlErrorUninitialized;
}

Result<std::vector<DeviceReading>> NvmlSource::sample() {
  std::vector<DeviceReading> readings;
  readings.reserve(devices_.size());
  for (size_t i = 0; i < devices_.size(); ++i) {
    DeviceReading reading;
    reading.index = devices_[i].index;
    reading.pci_bus_id = devices_[i].pci_bus_id;
    reading.uuid = devices_[i].uuid;
    if (!read(handles_[i], reading)) {
      return Error(ErrorCode::kUnavailable, "NVML is no longer initialized: " + reading.error);
    }
    readings.push_back(std::move(reading));
  }
  return readings;
}

std::string NvmlSource::describe() const {
  return "NVML (" + library_ + "), " + std::to_string(devices_.size()) +
         (devices_.size() == 1 ? " GPU" : " GPUs");
}

}  // namespace accel::nvml
