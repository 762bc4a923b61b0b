#pragma once
// How far a NIC is from an accelerator, for picking the NICs a job's
// accelerators should use. Pure functions of the model.
#include <vector>

#include "accel/topology/model.h"

namespace accel::topology {

// Nearest first; the enum order is the ranking.
enum class Distance {
  kSamePciSwitch,   // a PCI bridge below the host bridge is common to both
  kSameHostBridge,  // same root complex, different switches or root ports
  kSameNumaNode,    // same NUMA locality, different host bridges
  kSamePackage,     // same socket, different NUMA nodes
  kOtherSocket,     // anything further, or locality unknown
};

// 0 for kSamePciSwitch up to 4 for kOtherSocket; lower is nearer.
int distanceRank(Distance distance);

// "pci-switch", "host-bridge", "numa-node", "package", "other-socket".
const char* distanceName(Distance distance);

// Compares PCI paths first, then NUMA nodes, then packages. A device hwloc
// attached to the whole machine (Locality::machine_wide) never counts as
// sharing a NUMA node; it shares a package only on a one-package machine.
Distance distance(const Locality& a, const Locality& b);
Distance distance(const Accelerator& accelerator, const Nic& nic);

struct NicChoice {
  unsigned nic = 0;  // index into NodeTopology::nics
  Distance distance = Distance::kOtherSocket;
};

// Every NIC of `topology`, nearest to `accelerator` first; ties keep NIC
// index order. Empty when the node has no NICs.
std::vector<NicChoice> nearestNics(const NodeTopology& topology, const Accelerator& accelerator);

}  // namespace accel::topology
