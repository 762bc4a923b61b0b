#include <cctype>
#include <utility>

#include "classify_internal.h"
#include "inventory.h"

namespace accel::topology {

const char* acceleratorKindName(AcceleratorKind kind) {
  switch (kind) {
    case AcceleratorKind::kGpu:
      return "gpu";
    case AcceleratorKind::kIpu:
      return "ipu";
    case AcceleratorKind::kOther:
      return "other";
  }
  return "other";
}

const char* linkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kEthernet:
      return "ethernet";
    case LinkKind::kInfiniband:
      return "infiniband";
    case LinkKind::kSlingshot:
      return "slingshot";
    case LinkKind::kOmniPath:
      return "omnipath";
    case LinkKind::kOther:
      return "other";
  }
  return "other";
}

namespace detail {

const std::string& OsDeviceRecord::info(const std::string& key) const {
  static const std::string kEmpty;
  for (const auto& [info_name, value] : infos) {
    if (info_name == key) return value;
  }
  return kEmpty;
}

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool isComputeOsDevice(const OsDeviceRecord& device) {
  if (device.type == OsDeviceType::kCoproc) return true;
  if (device.type != OsDeviceType::kGpu) return false;
  // hwloc 2 names the backend in the subtype; hwloc 1 exports only put it
  // in the Backend info.
  const std::string& backend = device.subtype.empty() ? device.info("Backend") : device.subtype;
  for (const char* known : {"NVML", "RSMI", "LevelZero", "CUDA", "OpenCL"}) {
    if (equalsIgnoreCase(backend, known)) return true;
  }
  return false;
}

NodeTopology classify(Inventory inventory) {
  NodeTopology topology;
  topology.accelerators = findAccelerators(inventory);
  topology.nics = findNics(inventory);
  topology.hostname = std::move(inventory.hostname);
  topology.numa_nodes = std::move(inventory.numa_nodes);
  topology.packages = inventory.packages;
  topology.cores = inventory.cores;
  topology.pus = inventory.pus;
  return topology;
}

}  // namespace detail
}  // namespace accel::topology
