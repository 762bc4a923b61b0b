#include "accel/agent/inventory.h"

namespace accel::agent {

AllocatorInput Inventory::allocatorInput() const {
  AllocatorInput in;
  for (const auto& d : devices) in.devices.push_back(d.slot);
  // Capture copies: the allocator's input must not outlive a reloaded inventory.
  in.device_distance = [dist = device_distance](uint32_t a, uint32_t b) {
    if (a >= dist.size() || b >= dist[a].size()) return 99;
    return dist[a][b];
  };
  in.nic_distance = [nic = nic_distance](uint32_t a) { return a < nic.size() ? nic[a] : 99; };
  return in;
}

}  // namespace accel::agent
