// Distance rules on hand-built localities, independent of hwloc.
#include "accel/topology/distance.h"

#include <gtest/gtest.h>

namespace accel::topology {
namespace {

Locality on(std::string host_bridge, std::vector<std::string> bridges, std::vector<unsigned> numa,
            std::vector<unsigned> packages) {
  Locality locality;
  locality.pci_host_bridge = std::move(host_bridge);
  locality.pci_bridges = std::move(bridges);
  locality.numa_nodes = std::move(numa);
  locality.packages = std::move(packages);
  return locality;
}

TEST(TopologyDistance, RanksAreOrderedAndNamed) {
  EXPECT_EQ(distanceRank(Distance::kSamePciSwitch), 0);
  EXPECT_LT(distanceRank(Distance::kSameHostBridge), distanceRank(Distance::kSameNumaNode));
  EXPECT_LT(distanceRank(Distance::kSameNumaNode), distanceRank(Distance::kSamePackage));
  EXPECT_EQ(distanceRank(Distance::kOtherSocket), 4);
  EXPECT_STREQ(distanceName(Distance::kSamePciSwitch), "pci-switch");
  EXPECT_STREQ(distanceName(Distance::kOtherSocket), "other-socket");
}

TEST(TopologyDistance, EachLevel) {
  Locality gpu = on("0000:[40-4f]", {"0000:40:01.0", "0000:41:00.0", "0000:42:03.0"}, {1}, {0});
  EXPECT_EQ(
      distance(gpu, on("0000:[40-4f]", {"0000:40:01.0", "0000:41:00.0", "0000:42:02.0"}, {1}, {0})),
      Distance::kSamePciSwitch);
  EXPECT_EQ(distance(gpu, on("0000:[40-4f]", {"0000:40:02.0"}, {1}, {0})),
            Distance::kSameHostBridge);
  EXPECT_EQ(distance(gpu, on("0000:[50-5f]", {"0000:50:01.0"}, {1}, {0})), Distance::kSameNumaNode);
  EXPECT_EQ(distance(gpu, on("0000:[60-6f]", {}, {2}, {0})), Distance::kSamePackage);
  EXPECT_EQ(distance(gpu, on("0000:[80-8f]", {}, {3}, {1})), Distance::kOtherSocket);
  // Functions of one card below one root port share it.
  EXPECT_EQ(distance(on("0000:[00-0f]", {"0000:00:02.0"}, {0}, {0}),
                     on("0000:[00-0f]", {"0000:00:02.0"}, {0}, {0})),
            Distance::kSamePciSwitch);
}

TEST(TopologyDistance, UnknownLocalityIsNeverNearerThanItsProof) {
  Locality wide = on("0000:[c0-c1]", {"0000:c0:07.1"}, {0, 1, 2, 3}, {0});
  wide.machine_wide = true;
  Locality also_wide = on("0000:[c4-c6]", {"0000:c4:01.1"}, {0, 1, 2, 3}, {0});
  also_wide.machine_wide = true;
  // Same NUMA set, but it means "unknown": only the single package counts.
  EXPECT_EQ(distance(wide, also_wide), Distance::kSamePackage);
  // On two sockets a machine-wide device shares nothing provable.
  Locality two_socket = wide;
  two_socket.packages = {0, 1};
  EXPECT_EQ(distance(two_socket, on("0000:[10-1f]", {}, {0}, {0})), Distance::kOtherSocket);
  // A shared host bridge still counts, locality or not.
  Locality sibling = on("0000:[c0-c1]", {"0000:c0:01.1"}, {0, 1, 2, 3}, {0});
  sibling.machine_wide = true;
  EXPECT_EQ(distance(wide, sibling), Distance::kSameHostBridge);
  // No locality at all.
  EXPECT_EQ(distance(Locality{}, Locality{}), Distance::kOtherSocket);
}

TEST(TopologyDistance, NearestNicsSortsByRankThenIndex) {
  NodeTopology topology;
  Accelerator gpu;
  gpu.locality = on("0000:[40-4f]", {"0000:40:01.0", "0000:41:00.0"}, {1}, {0});
  const std::vector<Locality> nic_places = {
      on("0000:[80-8f]", {"0000:80:01.0"}, {3}, {1}),                  // other socket
      on("0000:[50-5f]", {"0000:50:01.0"}, {1}, {0}),                  // NUMA node
      on("0000:[40-4f]", {"0000:40:01.0", "0000:41:00.0"}, {1}, {0}),  // switch
      on("0000:[50-5f]", {"0000:50:02.0"}, {1}, {0}),                  // NUMA node
  };
  for (unsigned i = 0; i < nic_places.size(); ++i) {
    Nic nic;
    nic.index = i;
    nic.locality = nic_places[i];
    topology.nics.push_back(nic);
  }
  auto nearest = nearestNics(topology, gpu);
  ASSERT_EQ(nearest.size(), 4u);
  EXPECT_EQ(nearest[0].nic, 2u);
  EXPECT_EQ(nearest[0].distance, Distance::kSamePciSwitch);
  EXPECT_EQ(nearest[1].nic, 1u);
  EXPECT_EQ(nearest[2].nic, 3u);
  EXPECT_EQ(nearest[3].nic, 0u);
  EXPECT_EQ(nearest[3].distance, Distance::kOtherSocket);
}

}  // namespace
}  // namespace accel::topology
