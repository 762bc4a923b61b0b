// Which PCI functions and loose OS devices are accelerators, and what they
// are. The PCI class decides first; compute OS devices (CUDA, RSMI, ...)
// promote functions whose class alone says nothing, such as a co-processor.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "accel/topology/pci_ids.h"
#include "classify_internal.h"

namespace accel::topology::detail {
namespace {

// OS devices that stand for the accelerator itself. Disks, network
// interfaces and DMA channels of the same function belong elsewhere.
bool describesAccelerator(const OsDeviceRecord& device) {
  return device.type == OsDeviceType::kGpu || device.type == OsDeviceType::kCoproc ||
         device.type == OsDeviceType::kOther;
}

bool isGpuRuntimeDevice(const OsDeviceRecord& device) {
  if (!isComputeOsDevice(device)) return false;
  if (equalsIgnoreCase(device.subtype, "OpenCL")) {
    return equalsIgnoreCase(device.info("OpenCLDeviceType"), "GPU");
  }
  return device.type == OsDeviceType::kGpu || !device.info("GPUModel").empty();
}

// hwloc reports vendors as runtimes spell them ("NVIDIA Corporation",
// "Advanced Micro Devices, Inc."); the model uses short names.
std::string shortVendor(const std::string& reported) {
  if (reported.find("NVIDIA") != std::string::npos) return "NVIDIA";
  if (reported.find("AMD") != std::string::npos ||
      reported.find("Advanced Micro Devices") != std::string::npos) {
    return "AMD";
  }
  if (reported.find("Intel") != std::string::npos) return "Intel";
  return reported;
}

std::string reportedVendor(const std::vector<OsDeviceRecord>& devices) {
  for (const auto& device : devices) {
    if (!device.info("GPUVendor").empty()) return shortVendor(device.info("GPUVendor"));
  }
  return "";
}

std::string reportedModel(const std::vector<OsDeviceRecord>& devices) {
  for (const auto& device : devices) {
    if (!device.info("GPUModel").empty()) return device.info("GPUModel");
  }
  return "";
}

AcceleratorKind kindOf(std::uint16_t vendor_id, std::uint16_t class_id,
                       const std::vector<OsDeviceRecord>& devices) {
  if (vendor_id == pci::kVendorGraphcore) return AcceleratorKind::kIpu;
  if (class_id != 0 && pci::baseClass(class_id) == 0x03) return AcceleratorKind::kGpu;
  if (pci::isGpuVendor(vendor_id)) return AcceleratorKind::kGpu;
  if (std::any_of(devices.begin(), devices.end(), isGpuRuntimeDevice)) return AcceleratorKind::kGpu;
  return AcceleratorKind::kOther;
}

std::vector<std::string> sortedNames(const std::vector<OsDeviceRecord>& devices) {
  std::vector<std::string> names;
  for (const auto& device : devices) {
    if (describesAccelerator(device)) names.push_back(device.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<Accelerator> fromPci(const PciRecord& record) {
  bool computes =
      std::any_of(record.os_devices.begin(), record.os_devices.end(), isComputeOsDevice);
  if (!computes && !pci::isAcceleratorByIds(record.class_id, record.vendor_id, record.device_id)) {
    return std::nullopt;
  }
  Accelerator accelerator;
  accelerator.kind = kindOf(record.vendor_id, record.class_id, record.os_devices);
  const char* table_vendor = pci::vendorName(record.vendor_id);
  std::string reported = reportedVendor(record.os_devices);
  accelerator.vendor = table_vendor != nullptr ? table_vendor
                       : !reported.empty()     ? reported
                                               : pci::vendorLabel(record.vendor_id);
  accelerator.model = reportedModel(record.os_devices);
  if (accelerator.model.empty()) accelerator.model = record.device_name;
  accelerator.pci_vendor_id = record.vendor_id;
  accelerator.pci_device_id = record.device_id;
  accelerator.pci_class_id = record.class_id;
  accelerator.pci_bus_id = record.bus_id;
  accelerator.os_devices = sortedNames(record.os_devices);
  accelerator.locality = record.locality;
  return accelerator;
}

// Runtimes number the devices they see (cuda0, nvml0, opencl0d0, rsmi0);
// without a PCI parent that number is the only link between the OS devices
// of one device. Returns the digits that end the name, "" when none.
std::string deviceNumber(const std::string& name) {
  std::size_t end = name.size();
  std::size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
  return name.substr(begin, end - begin);
}

std::vector<Accelerator> fromLooseDevices(const std::vector<LooseOsDevice>& loose) {
  std::map<std::string, std::vector<const LooseOsDevice*>> groups;
  for (const auto& entry : loose) {
    if (!isComputeOsDevice(entry.device)) continue;
    groups[entry.parent_key + "#" + deviceNumber(entry.device.name)].push_back(&entry);
  }
  std::vector<Accelerator> accelerators;
  for (const auto& [key, members] : groups) {
    std::vector<OsDeviceRecord> devices;
    for (const auto* member : members) devices.push_back(member->device);
    Accelerator accelerator;
    accelerator.kind = kindOf(0, 0, devices);
    accelerator.vendor = reportedVendor(devices);
    accelerator.model = reportedModel(devices);
    accelerator.os_devices = sortedNames(devices);
    accelerator.locality = members.front()->locality;
    accelerators.push_back(std::move(accelerator));
  }
  std::sort(accelerators.begin(), accelerators.end(),
            [](const auto& a, const auto& b) { return a.os_devices < b.os_devices; });
  return accelerators;
}

// A runtime device hwloc could not tie to its PCI function (OpenCL without
// the vendor's PCI query, as on the captured H200 virtual machine) is a
// second view of one of the node's PCI accelerators of its vendor, never a
// device of its own: every such GPU is a PCI function. It only lends its
// model name, when the functions it could be are all one device id and name
// none. Loose devices with no PCI accelerator of their vendor (an SoC's
// integrated GPU) remain accelerators.
bool viewOfPciFunction(const Accelerator& loose, std::vector<Accelerator>& all,
                       std::size_t on_pci) {
  if (loose.vendor.empty()) return false;
  std::vector<Accelerator*> same;
  for (std::size_t i = 0; i < on_pci; ++i)
    if (all[i].vendor == loose.vendor && all[i].kind == loose.kind) same.push_back(&all[i]);
  if (same.empty()) return false;
  const bool one_device_id = std::all_of(same.begin(), same.end(), [&](const Accelerator* a) {
    return a->pci_device_id == same.front()->pci_device_id && a->model.empty();
  });
  if (one_device_id && !loose.model.empty())
    for (auto* a : same) a->model = loose.model;
  return true;
}

}  // namespace

std::vector<Accelerator> findAccelerators(const Inventory& inventory) {
  std::vector<Accelerator> accelerators;
  for (const auto& record : inventory.pci) {
    if (auto accelerator = fromPci(record)) accelerators.push_back(std::move(*accelerator));
  }
  std::sort(accelerators.begin(), accelerators.end(),
            [](const auto& a, const auto& b) { return *a.pci_bus_id < *b.pci_bus_id; });
  const std::size_t on_pci = accelerators.size();
  for (auto& accelerator : fromLooseDevices(inventory.loose)) {
    if (viewOfPciFunction(accelerator, accelerators, on_pci)) continue;
    accelerators.push_back(std::move(accelerator));
  }
  for (std::size_t i = 0; i < accelerators.size(); ++i) {
    accelerators[i].index = static_cast<unsigned>(i);
  }
  return accelerators;
}

}  // namespace accel::topology::detail
