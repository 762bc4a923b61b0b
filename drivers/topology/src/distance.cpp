#include "accel/topology/distance.h"

#include <algorithm>

namespace accel::topology {
namespace {

bool shareSwitch(const Locality& a, const Locality& b) {
  // Bus ids are unique on a node, so one common bridge means a common path
  // from there up to the host bridge.
  for (const auto& bridge : a.pci_bridges) {
    if (std::find(b.pci_bridges.begin(), b.pci_bridges.end(), bridge) != b.pci_bridges.end()) {
      return true;
    }
  }
  return false;
}

bool shareNumaNode(const Locality& a, const Locality& b) {
  return !a.machine_wide && !b.machine_wide && !a.numa_nodes.empty() &&
         a.numa_nodes == b.numa_nodes;
}

bool sharePackage(const Locality& a, const Locality& b) {
  return a.packages.size() == 1 && a.packages == b.packages;
}

}  // namespace

int distanceRank(Distance distance) { return static_cast<int>(distance); }

const char* distanceName(Distance distance) {
  switch (distance) {
    case Distance::kSamePciSwitch:
      return "pci-switch";
    case Distance::kSameHostBridge:
      return "host-bridge";
    case Distance::kSameNumaNode:
      return "numa-node";
    case Distance::kSamePackage:
      return "package";
    case Distance::kOtherSocket:
      return "other-socket";
  }
  return "other-socket";
}

Distance distance(const Locality& a, const Locality& b) {
  if (shareSwitch(a, b)) return Distance::kSamePciSwitch;
  if (!a.pci_host_bridge.empty() && a.pci_host_bridge == b.pci_host_bridge) {
    return Distance::kSameHostBridge;
  }
  if (shareNumaNode(a, b)) return Distance::kSameNumaNode;
  if (sharePackage(a, b)) return Distance::kSamePackage;
  return Distance::kOtherSocket;
}

Distance distance(const Accelerator& accelerator, const Nic& nic) {
  return distance(accelerator.locality, nic.locality);
}

std::vector<NicChoice> nearestNics(const NodeTopology& topology, const Accelerator& accelerator) {
  std::vector<NicChoice> choices;
  for (const auto& nic : topology.nics) choices.push_back({nic.index, distance(accelerator, nic)});
  std::stable_sort(choices.begin(), choices.end(), [](const NicChoice& a, const NicChoice& b) {
    return distanceRank(a.distance) < distanceRank(b.distance);
  });
  return choices;
}

}  // namespace accel::topology
