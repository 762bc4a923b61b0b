// Captured AMD/HPE nodes: MI250X and MI300A GPUs (RSMI), Slingshot NICs,
// and an hwloc 3.0 export that hwloc 2 cannot read. Expected values read
// from the XML files.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "accel/topology/distance.h"
#include "accel/topology/loader.h"
#include "topology_test_util.h"

namespace accel::topology {
namespace {

using testing::findAccelerator;
using testing::findNic;
using testing::loadFixture;

// tioga11: HPE Cray EX235a, one EPYC 7A53 (NPS4), 8 MI250X GCDs (class
// 0x0380) and 4 Cassini NICs, all on host bridges hwloc attached to the
// machine (no NUMA affinity reported), plus an Intel NIC on NUMA 0.
TEST(TopologyTioga, CountsAndNuma) {
  NodeTopology t = loadFixture("hpe-tioga.xml");
  EXPECT_EQ(t.hostname, "tioga11");
  EXPECT_EQ(t.packages, 1u);
  EXPECT_EQ(t.cores, 64u);
  EXPECT_EQ(t.pus, 64u);
  ASSERT_EQ(t.numa_nodes.size(), 4u);
  EXPECT_EQ(t.numa_nodes[1].cpus, "16-31");
  EXPECT_EQ(t.numa_nodes[3].memory_bytes, 135219343360u);
}

TEST(TopologyTioga, EightMi250xGcdsWithoutNumaAffinity) {
  NodeTopology t = loadFixture("hpe-tioga.xml");
  ASSERT_EQ(t.accelerators.size(), 8u);
  const std::vector<std::string> buses = {"0000:c1:00.0", "0000:c6:00.0", "0000:c9:00.0",
                                          "0000:ce:00.0", "0000:d1:00.0", "0000:d6:00.0",
                                          "0000:d9:00.0", "0000:de:00.0"};
  for (unsigned i = 0; i < 8; ++i) {
    const Accelerator& a = t.accelerators[i];
    EXPECT_EQ(a.pci_bus_id, buses[i]);
    EXPECT_EQ(a.kind, AcceleratorKind::kGpu);
    EXPECT_EQ(a.vendor, "AMD");
    EXPECT_EQ(a.pci_class_id, 0x0380);
    EXPECT_EQ(a.pci_vendor_id, 0x1002);
    EXPECT_EQ(a.os_devices, std::vector<std::string>{"rsmi" + std::to_string(i)});
    EXPECT_EQ(a.locality.numa_nodes, (std::vector<unsigned>{0, 1, 2, 3}));
    EXPECT_TRUE(a.locality.machine_wide);
  }
}

TEST(TopologyTioga, CassiniNicsAreSlingshot) {
  NodeTopology t = loadFixture("hpe-tioga.xml");
  ASSERT_EQ(t.nics.size(), 5u);
  const Nic& ens2 = *findNic(t, "ens2");
  EXPECT_EQ(ens2.link, LinkKind::kEthernet);
  EXPECT_EQ(ens2.locality.numa_nodes, std::vector<unsigned>{0});
  EXPECT_FALSE(ens2.locality.machine_wide);
  for (const char* name : {"hsi0", "hsi1", "hsi2", "hsi3"}) {
    const Nic* nic = findNic(t, name);
    ASSERT_NE(nic, nullptr) << name;
    // hwloc 2.8 gave these netdevs no subtype: the Cray vendor id decides.
    EXPECT_EQ(nic->link, LinkKind::kSlingshot) << name;
    EXPECT_EQ(nic->pci_vendor_id, 0x17db);
    EXPECT_FALSE(nic->rdma_device.has_value());
    EXPECT_TRUE(nic->locality.machine_wide);
  }
}

TEST(TopologyTioga, DistancesUseHostBridgesWhenNumaIsUnknown) {
  NodeTopology t = loadFixture("hpe-tioga.xml");
  const Accelerator& gcd0 = *findAccelerator(t, "0000:c1:00.0");
  const Accelerator& gcd1 = *findAccelerator(t, "0000:c6:00.0");
  // Host bridge 0000:[c4-c6] holds hsi0 and GCD 1 on different root ports.
  EXPECT_EQ(distance(gcd1, *findNic(t, "hsi0")), Distance::kSameHostBridge);
  // GCD 0 has a host bridge of its own; machine-wide locality never counts
  // as a shared NUMA node, but there is only one socket.
  EXPECT_EQ(distance(gcd0, *findNic(t, "hsi0")), Distance::kSamePackage);
  EXPECT_EQ(distance(gcd0, *findNic(t, "ens2")), Distance::kSamePackage);
  EXPECT_EQ(t.nics[nearestNics(t, gcd1).front().nic].netdev, "hsi0");
}

// tuolumne1001 (El Capitan class): 4 MI300A APUs, each its own package and
// NUMA node, each with a Cassini NIC that hwloc 2.12 tagged "Slingshot".
TEST(TopologyElCapitan, FourSocketsFourMi300a) {
  NodeTopology t = loadFixture("elcap.xml");
  EXPECT_EQ(t.packages, 4u);
  EXPECT_EQ(t.pus, 96u);
  ASSERT_EQ(t.numa_nodes.size(), 4u);
  EXPECT_EQ(t.numa_nodes[2].cpus, "48-71");
  ASSERT_EQ(t.accelerators.size(), 4u);
  for (unsigned i = 0; i < 4; ++i) {
    const Accelerator& a = t.accelerators[i];
    EXPECT_EQ(a.pci_bus_id, "000" + std::to_string(i) + ":02:00.0");
    // Class 0x1200 (processing accelerator), yet an AMD GPU with RSMI.
    EXPECT_EQ(a.pci_class_id, 0x1200);
    EXPECT_EQ(a.kind, AcceleratorKind::kGpu);
    EXPECT_EQ(a.vendor, "AMD");
    EXPECT_EQ(a.model, "Aqua Vanjaram [Instinct MI300A]");
    EXPECT_EQ(a.locality.numa_nodes, std::vector<unsigned>{i});
    EXPECT_EQ(a.locality.packages, std::vector<unsigned>{i});
  }
}

TEST(TopologyElCapitan, NicsAndDistancesPerSocket) {
  NodeTopology t = loadFixture("elcap.xml");
  ASSERT_EQ(t.nics.size(), 5u);
  EXPECT_EQ(findNic(t, "hsi2")->link, LinkKind::kSlingshot);
  EXPECT_EQ(findNic(t, "hsi2")->pci_bus_id, "0002:01:00.0");
  EXPECT_EQ(findNic(t, "enp129s0")->link, LinkKind::kEthernet);
  const Accelerator& apu0 = *findAccelerator(t, "0000:02:00.0");
  EXPECT_EQ(distance(apu0, *findNic(t, "hsi0")), Distance::kSameHostBridge);
  EXPECT_EQ(distance(apu0, *findNic(t, "enp129s0")), Distance::kSameNumaNode);
  EXPECT_EQ(distance(apu0, *findNic(t, "hsi1")), Distance::kOtherSocket);
  EXPECT_EQ(distance(*findAccelerator(t, "0003:02:00.0"), *findNic(t, "hsi3")),
            Distance::kSameHostBridge);
  auto nearest = nearestNics(t, apu0);
  EXPECT_EQ(t.nics[nearest[0].nic].netdev, "hsi0");
  EXPECT_EQ(t.nics[nearest[1].nic].netdev, "enp129s0");
}

// hwloc's own test file in format 3.0: kept as the unsupported case.
TEST(TopologyXmlV3, IsRejectedWithAClearMessage) {
  LoadOptions options;
  options.xml_path = std::string(ACCEL_HW_MOCK_DIR) + "/topologies/cxlmem+dax.v3.xml";
  auto loaded = loadTopology(options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code(), ErrorCode::kUnsupported);
  const std::string& message = loaded.error().message();
  EXPECT_NE(message.find("cxlmem+dax.v3.xml"), std::string::npos) << message;
  EXPECT_NE(message.find("hwloc XML format 3.0 is not supported"), std::string::npos) << message;
  EXPECT_NE(message.find("lstopo"), std::string::npos) << message;
}

}  // namespace
}  // namespace accel::topology
