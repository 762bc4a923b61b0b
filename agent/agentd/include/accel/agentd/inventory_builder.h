#pragma once
// Builds the job manager's device inventory from the node's topology.
//
// GPU ordinals follow PCI bus id order, which is the order in which Slurm's
// GRES numbers GPUs when gres.conf lists them by bus or autodetects them
// through NVML/RSMI; SLURM_JOB_GPUS therefore names the same devices.
#include <string>

#include "accel/agent/inventory.h"
#include "accel/common/result.h"
#include "accel/topology/model.h"

namespace accel::agentd {

agent::Inventory buildInventory(const topology::NodeTopology& topology, std::string source);

// Loads the topology (XML when `xml_path` is non-empty, else the live node)
// and builds the inventory from it.
Result<agent::Inventory> loadInventory(const std::string& xml_path);

}  // namespace accel::agentd
