#pragma once
// Pieces of classify() shared between its translation units.
#include <string_view>
#include <vector>

#include "inventory.h"

namespace accel::topology::detail {

// Handles of a compute runtime (CUDA, OpenCL, NVML, RSMI, LevelZero, MIC):
// the device can run work. DRM nodes (card0, renderD128) and displays are
// not: a BMC's VGA adapter has those too.
bool isComputeOsDevice(const OsDeviceRecord& device);

bool startsWith(std::string_view text, std::string_view prefix);
bool equalsIgnoreCase(std::string_view a, std::string_view b);

// Accelerators in their final order, with index set.
std::vector<Accelerator> findAccelerators(const Inventory& inventory);

// NICs in their final order, with index set.
std::vector<Nic> findNics(const Inventory& inventory);

}  // namespace accel::topology::detail
