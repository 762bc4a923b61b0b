#pragma once
// The node's accelerators and NICs as the job manager needs them: names to
// hand to tasks, and the distances used to choose devices. Built once from
// the topology (see agent/agentd), replaced whole on reload.
#include <cstdint>
#include <string>
#include <vector>

#include "accel/agent/device_allocator.h"

namespace accel::agent {

struct InventoryDevice {
  DeviceSlot slot;
  std::string name;                       // first OS device, e.g. "cuda0"; or "<kind><ordinal>"
  std::string pci_bus_id;                 // empty when none
  std::vector<std::string> nearest_nics;  // netdev names, nearest first
  // RDMA devices (mlx5_0, ...) of the NICs at the nearest distance, in NIC
  // order: what NCCL_IB_HCA and UCX_NET_DEVICES name. Empty without RDMA.
  std::vector<std::string> nearest_rdma;
};

struct Inventory {
  std::vector<InventoryDevice> devices;           // index == slot.index
  std::vector<std::vector<int>> device_distance;  // [a][b] rank
  std::vector<int> nic_distance;                  // per device, nearest NIC's rank
  std::string source;                             // "live" or the XML path, for status

  AllocatorInput allocatorInput() const;
};

}  // namespace accel::agent
