#include "accel/agentd/inventory_builder.h"

#include <map>

#include "accel/topology/distance.h"
#include "accel/topology/loader.h"

namespace accel::agentd {
namespace {

// The name tasks and people see for a device: the runtime's own name where
// there is one (cuda0, rsmi0), else the first OS device, else kind+ordinal.
std::string deviceName(const topology::Accelerator& a, const std::string& kind, uint32_t ordinal) {
  for (const char* prefix : {"cuda", "rsmi", "ze", "ipu"})
    for (const auto& d : a.os_devices)
      if (d.rfind(prefix, 0) == 0) return d;
  if (!a.os_devices.empty()) return a.os_devices.front();
  return kind + std::to_string(ordinal);
}

}  // namespace

agent::Inventory buildInventory(const topology::NodeTopology& t, std::string source) {
  agent::Inventory inv;
  inv.source = std::move(source);
  std::map<std::string, uint32_t> ordinals;
  for (const auto& a : t.accelerators) {
    agent::InventoryDevice d;
    std::string kind = topology::acceleratorKindName(a.kind);
    d.slot = agent::DeviceSlot{a.index, kind, ordinals[kind]++};
    d.name = deviceName(a, kind, d.slot.kind_ordinal);
    d.pci_bus_id = a.pci_bus_id.value_or("");
    auto nics = topology::nearestNics(t, a);
    for (const auto& c : nics) {
      const auto& nic = t.nics[c.nic];
      d.nearest_nics.push_back(!nic.netdev.empty() ? nic.netdev : nic.rdma_device.value_or(""));
      if (c.distance == nics.front().distance && nic.rdma_device)
        d.nearest_rdma.push_back(*nic.rdma_device);
    }
    inv.nic_distance.push_back(nics.empty()
                                   ? topology::distanceRank(topology::Distance::kOtherSocket) + 1
                                   : topology::distanceRank(nics.front().distance));
    inv.devices.push_back(std::move(d));
  }
  const size_t n = t.accelerators.size();
  inv.device_distance.assign(n, std::vector<int>(n, 0));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      inv.device_distance[i][j] = topology::distanceRank(
          topology::distance(t.accelerators[i].locality, t.accelerators[j].locality));
  return inv;
}

Result<agent::Inventory> loadInventory(const std::string& xml_path) {
  topology::LoadOptions opts;
  if (!xml_path.empty()) opts.xml_path = xml_path;
  auto t = topology::loadTopology(opts);
  ACCEL_TRY(t);
  return buildInventory(*t, xml_path.empty() ? "live" : xml_path);
}

}  // namespace accel::agentd
