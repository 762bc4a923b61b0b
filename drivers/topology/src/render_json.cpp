#include <cstdio>
#include <nlohmann/json.hpp>

#include "accel/topology/distance.h"
#include "accel/topology/render.h"

namespace accel::topology {
namespace {

// Keys keep the order written here, which reads better than sorted.
using json = nlohmann::ordered_json;

json optionalString(const std::optional<std::string>& value) {
  return value ? json(*value) : json(nullptr);
}

json pciId(std::uint16_t vendor_id, std::uint16_t device_id, bool on_pci) {
  if (!on_pci) return nullptr;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%04x", vendor_id, device_id);
  return buf;
}

void putLocality(json& out, const Locality& locality) {
  out["numa_nodes"] = locality.numa_nodes;
  out["packages"] = locality.packages;
  out["machine_wide"] = locality.machine_wide;
}

json nearestNicsJson(const NodeTopology& topology, const Accelerator& accelerator) {
  json list = json::array();
  for (const auto& choice : nearestNics(topology, accelerator)) {
    const Nic& nic = topology.nics.at(choice.nic);
    list.push_back({{"nic", choice.nic},
                    {"netdev", nic.netdev},
                    {"rdma_device", optionalString(nic.rdma_device)},
                    {"distance", distanceName(choice.distance)},
                    {"rank", distanceRank(choice.distance)}});
  }
  return list;
}

json acceleratorJson(const NodeTopology& topology, const Accelerator& accelerator) {
  json out = {{"index", accelerator.index},
              {"kind", acceleratorKindName(accelerator.kind)},
              {"vendor", accelerator.vendor},
              {"model", accelerator.model},
              {"pci_bus_id", optionalString(accelerator.pci_bus_id)},
              {"pci_id", pciId(accelerator.pci_vendor_id, accelerator.pci_device_id,
                               accelerator.pci_bus_id.has_value())},
              {"os_devices", accelerator.os_devices}};
  putLocality(out, accelerator.locality);
  out["nearest_nics"] = nearestNicsJson(topology, accelerator);
  return out;
}

json nicJson(const Nic& nic) {
  json out = {{"index", nic.index},
              {"netdev", nic.netdev},
              {"rdma_device", optionalString(nic.rdma_device)},
              {"pci_bus_id", optionalString(nic.pci_bus_id)},
              {"pci_id", pciId(nic.pci_vendor_id, nic.pci_device_id, nic.pci_bus_id.has_value())},
              {"link", linkKindName(nic.link)},
              {"address", nic.address}};
  putLocality(out, nic.locality);
  return out;
}

}  // namespace

std::string renderJson(const NodeTopology& topology, int indent) {
  json numa = json::array();
  for (const auto& node : topology.numa_nodes) {
    numa.push_back(
        {{"os_index", node.os_index}, {"memory_bytes", node.memory_bytes}, {"cpus", node.cpus}});
  }
  json accelerators = json::array();
  for (const auto& accelerator : topology.accelerators) {
    accelerators.push_back(acceleratorJson(topology, accelerator));
  }
  json nics = json::array();
  for (const auto& nic : topology.nics) nics.push_back(nicJson(nic));
  json doc = {{"hostname", topology.hostname},
              {"packages", topology.packages},
              {"cores", topology.cores},
              {"pus", topology.pus},
              {"numa_nodes", numa},
              {"accelerators", accelerators},
              {"nics", nics}};
  // Names come from XML files and drivers; a byte that is not UTF-8 is
  // replaced rather than thrown on (found by tests/fuzz/fuzz_topology_xml).
  return doc.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace accel::topology
