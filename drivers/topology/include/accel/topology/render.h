#pragma once
// Presentations of a NodeTopology for people and programs (accelctl
// topology, logs, the aggregator). Pure functions; no I/O.
#include <string>
#include <vector>

#include "accel/topology/model.h"

namespace accel::topology {

// JSON document:
//   {"hostname", "packages", "cores", "pus",
//    "numa_nodes":   [{"os_index", "memory_bytes", "cpus"}],
//    "accelerators": [{"index", "kind", "vendor", "model", "pci_bus_id" (null
//                      when none), "pci_id" ("10de:2330", null), "os_devices",
//                      "numa_nodes", "packages", "machine_wide",
//                      "nearest_nics": [{"nic", "netdev", "rdma_device",
//                                        "distance", "rank"}]}],
//    "nics":         [{"index", "netdev", "rdma_device" (null), "pci_bus_id"
//                      (null), "pci_id", "link", "address", "numa_nodes",
//                      "packages", "machine_wide"}]}
// Fields are only ever added. `indent` < 0 gives one line.
std::string renderJson(const NodeTopology& topology, int indent = 2);

// A terminal table: a summary line, then NUMA nodes, accelerators (with the
// nearest NIC) and NICs. Says "no accelerators found on this node" when
// there are none.
std::string renderTable(const NodeTopology& topology);

// "0-3,8,10-11" for ascending indexes; "" for none.
std::string formatIndexList(const std::vector<unsigned>& indexes);

}  // namespace accel::topology
