#pragma once
// Builds the fabric step from accel.conf (Fabric=yes): the manager on the
// namespace the daemon runs in, its ledger under RunDir/fabric, and the NIC
// choice from the node's topology.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accel/agent/fabric_step.h"
#include "accel/common/config.h"
#include "accel/topology/model.h"

namespace accel::agentd {

// Makes the fabric step of a node with Fabric=yes.
using FabricSetUp = std::function<Result<std::unique_ptr<agent::FabricStep>>(
    const AccelConfig& config, topology::NodeTopology topology)>;

// The real one, over the kernel's netlink (NetlinkLinks). Defined in
// fabric_setup.cpp, which only the accel-agentd executable compiles: the
// daemon's library links the fabric logic and its seam, not the adapter.
// Errors name the key (FabricAddressRange, FabricRoutes, ...) or the netlink failure.
Result<std::unique_ptr<agent::FabricStep>> makeFabricStep(const AccelConfig& config,
                                                          topology::NodeTopology topology);

// The interface of the IPv4 default route, read from /proc/net/route text;
// empty when there is none.
std::string defaultRouteInterface(std::string_view proc_net_route);

// "a, b,c" -> {"a","b","c"}; empty items dropped.
std::vector<std::string> splitList(std::string_view text);

}  // namespace accel::agentd
