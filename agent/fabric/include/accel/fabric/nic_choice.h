#pragma once
// Which NICs carry a job's fabric traffic: a pure function of the node's
// topology, the job's accelerators and the configuration.
#include <string>
#include <vector>

#include "accel/common/result.h"
#include "accel/topology/distance.h"
#include "accel/topology/model.h"

namespace accel::fabric {

struct FabricNic {
  std::string netdev;
  // The nearest this NIC is to any of the job's accelerators; kOtherSocket
  // when the job has none on this node or the NIC is not in the topology.
  topology::Distance distance = topology::Distance::kOtherSocket;
};

// Chooses the job's fabric NICs.
//  - Candidates: with `configured` non-empty, exactly those interfaces (a
//    name hwloc did not report stays a candidate of unknown locality, since
//    the configuration is the operator's word); otherwise every topology NIC
//    that has a netdev. Names in `avoid` (the management interface, e.g. the
//    one holding the default route) are never candidates.
//  - For each accelerator, every candidate at its best distance is chosen
//    (a dual-port card on the accelerator's PCI switch gives both ports).
//  - A job with no accelerator on this node (IPUs sit behind the fabric)
//    gets every configured interface, or none when nothing is configured.
// The result has no duplicates, topology NICs in index order first, then
// configured names hwloc did not report, in configuration order. Empty is a
// valid answer (no fabric for this job).
// Errors (kInvalidArgument): an accelerator index not in the topology, or a
// configured interface that is also in `avoid` (a configuration mistake that
// would put job traffic on the management network).
Result<std::vector<FabricNic>> chooseFabricNics(const topology::NodeTopology& topology,
                                                const std::vector<unsigned>& accelerators,
                                                const std::vector<std::string>& configured,
                                                const std::vector<std::string>& avoid);

// The netdev names, in order: what FabricManager::setUp takes.
std::vector<std::string> nicNames(const std::vector<FabricNic>& nics);

}  // namespace accel::fabric
