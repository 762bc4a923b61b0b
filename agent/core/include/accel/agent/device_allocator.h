#pragma once
// Chooses which accelerators a job gets. Two ways in:
//  - by Slurm's choice: SLURM_JOB_GPUS lists GPU indexes that slurmd already
//    assigned; we map them onto our devices and check nobody else holds them;
//  - by count (the SPANK options): we choose, preferring devices close to
//    each other (same PCI switch, then host bridge, NUMA node, socket) and
//    close to a NIC.
// Pure logic over a snapshot; the caller owns the held-device set and the
// topology. The allocator never hands out a device a live job holds.
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/result.h"

namespace accel::agent {

struct DeviceSlot {
  uint32_t index = 0;         // accelerator index in the topology
  std::string kind;           // "gpu", "ipu", "other"
  uint32_t kind_ordinal = 0;  // position among devices of the same kind (GPU 0, 1, ...)
};

struct AllocatorInput {
  std::vector<DeviceSlot> devices;
  std::set<uint32_t> held;  // indexes held by other live jobs
  // Distance rank between two devices (0 = same PCI switch ... larger = farther).
  std::function<int(uint32_t, uint32_t)> device_distance;
  // Rank of the nearest NIC to a device (smaller = closer); may be empty.
  std::function<int(uint32_t)> nic_distance;
};

// Parses SLURM_JOB_GPUS ("0,2", "0-3", "1,4-5"). Empty text gives an empty list.
Result<std::vector<uint32_t>> parseGpuList(std::string_view text);

// Devices of kind "gpu" whose kind_ordinal is in `gpu_ordinals`. Fails
// (kConflict) if one is held, kNotFound if the node has no such GPU.
Result<std::vector<uint32_t>> pickGpus(const AllocatorInput& in,
                                       const std::vector<uint32_t>& gpu_ordinals);

// `count` free devices of `kind`, as close together as the node allows.
// kInvalidArgument when fewer are free than asked (this node cannot meet the
// request; not a node fault), naming how many are.
Result<std::vector<uint32_t>> pickByCount(const AllocatorInput& in, std::string_view kind,
                                          uint32_t count);

}  // namespace accel::agent
