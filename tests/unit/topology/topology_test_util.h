#pragma once
// Shared by the topology tests: loading captured fixtures, finding devices
// in a model, and a minimal hwloc 2 XML machine to hang literal I/O trees on.
#include <string>
#include <string_view>

#include "accel/topology/model.h"

namespace accel::topology::testing {

// Loads tests/hw_mock/topologies/<name>; fails the test when it does not load.
NodeTopology loadFixture(const std::string& name);

// The accelerator with this PCI bus id, or nullptr.
const Accelerator* findAccelerator(const NodeTopology& topology, std::string_view bus_id);

// The NIC with this netdev (or, when netdev is empty, this RDMA device), or nullptr.
const Nic* findNic(const NodeTopology& topology, std::string_view name);

// A one-package, one-NUMA-node, one-PU machine whose package holds `io`
// (Bridge / PCIDev / OSDev elements of hwloc's 2.0 XML format), and whose
// Machine object holds `machine_io` (OS devices without a PCI parent).
std::string machineXml(std::string_view io, std::string_view machine_io = "");

}  // namespace accel::topology::testing
