#pragma once
// What the hwloc adapter reads, before any judgement: every PCI function
// with its OS devices and locality, and the OS devices that have no PCI
// parent. classify() turns this into accelerators and NICs. Internal to
// accel_topology; no hwloc types, so classification stays a pure function.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "accel/topology/model.h"

namespace accel::topology::detail {

enum class OsDeviceType { kBlock, kGpu, kNetwork, kOpenFabrics, kDma, kCoproc, kOther };

struct OsDeviceRecord {
  std::string name;
  OsDeviceType type = OsDeviceType::kOther;
  std::string subtype;  // hwloc's subtype ("CUDA", "RSMI", "Slingshot"); may be empty
  std::vector<std::pair<std::string, std::string>> infos;  // in hwloc's order

  // First value of the info attribute `key`, or "" when absent.
  const std::string& info(const std::string& key) const;
};

struct PciRecord {
  std::string bus_id;  // "0000:04:00.0"
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint16_t class_id = 0;
  std::string device_name;  // PCIDevice info when hwloc had pci names; may be empty
  Locality locality;
  // OS devices directly below this function; sub-devices (ze0.1 inside ze0)
  // are not listed, their parent stands for them.
  std::vector<OsDeviceRecord> os_devices;
};

// An OS device hwloc attached to a normal object because it has no PCI
// parent: integrated GPUs (APUs), platform NICs, virtual interfaces.
struct LooseOsDevice {
  OsDeviceRecord device;
  std::string parent_key;  // identifies the object it hangs from
  Locality locality;
};

struct Inventory {
  std::string hostname;
  std::vector<NumaNode> numa_nodes;
  unsigned packages = 0;
  unsigned cores = 0;
  unsigned pus = 0;
  std::vector<PciRecord> pci;
  std::vector<LooseOsDevice> loose;
};

// Builds the node model: which PCI functions and loose OS devices are
// accelerators, which network devices are NICs, and their link kinds.
NodeTopology classify(Inventory inventory);

}  // namespace accel::topology::detail
