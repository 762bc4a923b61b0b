#pragma once
// The node the handler and status tests run against: two GPUs, cuda0 and
// cuda1, equally close to each other and to the NIC.
#include <string>
#include <vector>

#include "accel/agent/inventory.h"

namespace accel::agentd::testing {

inline agent::Inventory twoGpuInventory() {
  agent::Inventory inv;
  for (uint32_t i = 0; i < 2; ++i) {
    agent::InventoryDevice d;
    d.slot = {i, "gpu", i};
    d.name = "cuda" + std::to_string(i);
    inv.devices.push_back(d);
  }
  inv.device_distance.assign(2, std::vector<int>(2, 0));
  inv.nic_distance.assign(2, 0);
  return inv;
}

}  // namespace accel::agentd::testing
