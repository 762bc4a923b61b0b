// Captured NVIDIA nodes. The expected values were read from the XML files
// (lstopo-no-graphics -i FILE -v), not from this code's output.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "accel/topology/distance.h"
#include "topology_test_util.h"

namespace accel::topology {
namespace {

using testing::findAccelerator;
using testing::findNic;
using testing::loadFixture;

std::vector<std::string> busIds(const NodeTopology& topology) {
  std::vector<std::string> ids;
  for (const auto& a : topology.accelerators) ids.push_back(a.pci_bus_id.value_or("none"));
  return ids;
}

std::vector<std::string> netdevs(const NodeTopology& topology) {
  std::vector<std::string> names;
  for (const auto& nic : topology.nics) names.push_back(nic.netdev);
  return names;
}

// ipa20: Dell XE8640, 2 Xeon 8480+ in SNC4 mode (8 NUMA nodes), 4 H100.
TEST(TopologyIpa20, MachineCountsAndNumaNodes) {
  NodeTopology t = loadFixture("ipa20.xml");
  EXPECT_EQ(t.hostname, "testhost-nvidia");
  EXPECT_EQ(t.packages, 2u);
  EXPECT_EQ(t.cores, 112u);
  EXPECT_EQ(t.pus, 224u);
  ASSERT_EQ(t.numa_nodes.size(), 8u);
  for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(t.numa_nodes[i].os_index, i);
  EXPECT_EQ(t.numa_nodes[0].memory_bytes, 540245127168u);
  EXPECT_EQ(t.numa_nodes[0].cpus, "0-13,112-125");
  EXPECT_EQ(t.numa_nodes[7].cpus, "98-111,210-223");
}

TEST(TopologyIpa20, FourH100sWithTheirOsDevicesAndNumaNodes) {
  NodeTopology t = loadFixture("ipa20.xml");
  // The Matrox BMC VGA (0000:03:00.0) and the two Intel 0b40 co-processors
  // per socket (QAT/DSA, no OS devices) are not accelerators.
  EXPECT_EQ(busIds(t), (std::vector<std::string>{"0000:4e:00.0", "0000:5f:00.0", "0000:cb:00.0",
                                                 "0000:db:00.0"}));
  const std::vector<unsigned> numa = {3, 1, 7, 5};
  for (unsigned i = 0; i < 4; ++i) {
    const Accelerator& a = t.accelerators[i];
    EXPECT_EQ(a.index, i);
    EXPECT_EQ(a.kind, AcceleratorKind::kGpu);
    EXPECT_EQ(a.vendor, "NVIDIA");
    EXPECT_EQ(a.model, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(a.pci_vendor_id, 0x10de);
    EXPECT_EQ(a.pci_device_id, 0x2330);
    EXPECT_EQ(a.pci_class_id, 0x0302);
    EXPECT_EQ(a.locality.numa_nodes, std::vector<unsigned>{numa[i]});
    EXPECT_EQ(a.locality.packages, std::vector<unsigned>{i < 2 ? 0u : 1u});
    EXPECT_FALSE(a.locality.machine_wide);
  }
  // cuda0, nvml0 and opencl0d0 sit on one PCI function: one GPU, not three.
  EXPECT_EQ(t.accelerators[0].os_devices,
            (std::vector<std::string>{"cuda0", "nvml0", "opencl0d0"}));
  EXPECT_EQ(t.accelerators[2].os_devices,
            (std::vector<std::string>{"cuda2", "nvml2", "opencl0d2"}));
}

TEST(TopologyIpa20, SixNicsFourWithMlx5) {
  NodeTopology t = loadFixture("ipa20.xml");
  EXPECT_EQ(netdevs(t), (std::vector<std::string>{"eno8303", "eno8403", "hsi0", "ibs2f1", "ibp94s0",
                                                  "ibp218s0"}));
  struct Expect {
    const char* netdev;
    const char* rdma;
    const char* bus;
    LinkKind link;
    unsigned numa;
  };
  for (const Expect& e : {Expect{"eno8303", nullptr, "0000:01:00.0", LinkKind::kEthernet, 0},
                          Expect{"hsi0", "mlx5_0", "0000:4d:00.0", LinkKind::kInfiniband, 3},
                          Expect{"ibs2f1", "mlx5_1", "0000:4d:00.1", LinkKind::kInfiniband, 3},
                          Expect{"ibp94s0", "mlx5_2", "0000:5e:00.0", LinkKind::kInfiniband, 1},
                          Expect{"ibp218s0", "mlx5_3", "0000:da:00.0", LinkKind::kInfiniband, 5}}) {
    const Nic* nic = findNic(t, e.netdev);
    ASSERT_NE(nic, nullptr) << e.netdev;
    EXPECT_EQ(nic->rdma_device, e.rdma ? std::optional<std::string>(e.rdma) : std::nullopt);
    EXPECT_EQ(nic->pci_bus_id, e.bus);
    EXPECT_EQ(nic->link, e.link) << e.netdev;
    EXPECT_EQ(nic->locality.numa_nodes, std::vector<unsigned>{e.numa}) << e.netdev;
  }
}

TEST(TopologyIpa20, GpuNicDistances) {
  NodeTopology t = loadFixture("ipa20.xml");
  const Accelerator& gpu0 = *findAccelerator(t, "0000:4e:00.0");
  const Accelerator& gpu1 = *findAccelerator(t, "0000:5f:00.0");
  const Accelerator& gpu2 = *findAccelerator(t, "0000:cb:00.0");
  const Accelerator& gpu3 = *findAccelerator(t, "0000:db:00.0");
  // Both behind the Broadcom switch 0000:49:00.0.
  EXPECT_EQ(distance(gpu0, *findNic(t, "hsi0")), Distance::kSamePciSwitch);
  EXPECT_EQ(distance(gpu1, *findNic(t, "ibp94s0")), Distance::kSamePciSwitch);
  EXPECT_EQ(distance(gpu3, *findNic(t, "ibp218s0")), Distance::kSamePciSwitch);
  // NUMA 3 against NUMA 1 and 0 of the same socket; the far socket.
  EXPECT_EQ(distance(gpu0, *findNic(t, "ibp94s0")), Distance::kSamePackage);
  EXPECT_EQ(distance(gpu0, *findNic(t, "eno8303")), Distance::kSamePackage);
  EXPECT_EQ(distance(gpu0, *findNic(t, "ibp218s0")), Distance::kOtherSocket);
  // GPU 2 has no NIC on its switch or NUMA node: the nearest is on its socket.
  EXPECT_EQ(distance(gpu2, *findNic(t, "ibp218s0")), Distance::kSamePackage);

  auto nearest = nearestNics(t, gpu0);
  ASSERT_EQ(nearest.size(), 6u);
  EXPECT_EQ(t.nics[nearest[0].nic].rdma_device, "mlx5_0");
  EXPECT_EQ(t.nics[nearest[1].nic].rdma_device, "mlx5_1");
  EXPECT_EQ(nearest[1].distance, Distance::kSamePciSwitch);
  EXPECT_EQ(t.nics[nearest.back().nic].netdev, "ibp218s0");
  EXPECT_EQ(t.nics[nearestNics(t, gpu2).front().nic].netdev, "ibp218s0");
}

// hwloc's test machine with a hand-made I/O tree: GPUs with and without OS
// devices, an AMD VGA GPU, a Matrox BMC, and an IB card next to a GPU.
TEST(TopologyWholeIo, CountsAndNuma) {
  NodeTopology t = loadFixture("32em64t-2n8c2t-pci-wholeio.xml");
  EXPECT_EQ(t.packages, 2u);
  EXPECT_EQ(t.cores, 16u);
  EXPECT_EQ(t.pus, 32u);
  ASSERT_EQ(t.numa_nodes.size(), 2u);
  EXPECT_EQ(t.numa_nodes[0].cpus, "0-7,16-23");
  EXPECT_EQ(t.numa_nodes[1].memory_bytes, 34359738368u);
}

TEST(TopologyWholeIo, AcceleratorsIncludeTheAmdVgaButNotTheMatrox) {
  NodeTopology t = loadFixture("32em64t-2n8c2t-pci-wholeio.xml");
  EXPECT_EQ(busIds(t), (std::vector<std::string>{"0000:03:00.0", "0000:83:00.0", "0000:84:00.0",
                                                 "0000:84:00.1"}));
  EXPECT_EQ(findAccelerator(t, "0000:05:03.0"), nullptr);  // Matrox G200eW
  const Accelerator& plain = *findAccelerator(t, "0000:03:00.0");
  EXPECT_TRUE(plain.os_devices.empty());  // no runtime reported it: still a GPU
  EXPECT_EQ(plain.locality.numa_nodes, std::vector<unsigned>{0});
  const Accelerator& k40 = *findAccelerator(t, "0000:84:00.0");
  EXPECT_EQ(k40.os_devices, (std::vector<std::string>{"card0", "cuda0"}));
  EXPECT_EQ(k40.model, "Tesla K40m");
  const Accelerator& radeon = *findAccelerator(t, "0000:84:00.1");
  EXPECT_EQ(radeon.vendor, "AMD");
  EXPECT_EQ(radeon.kind, AcceleratorKind::kGpu);
  EXPECT_EQ(radeon.pci_class_id, 0x0300);
  EXPECT_EQ(radeon.os_devices, std::vector<std::string>{"opencl0d1"});
  EXPECT_EQ(radeon.locality.numa_nodes, std::vector<unsigned>{1});
}

TEST(TopologyWholeIo, NicsAndDistances) {
  NodeTopology t = loadFixture("32em64t-2n8c2t-pci-wholeio.xml");
  EXPECT_EQ(netdevs(t), (std::vector<std::string>{"ib0", "eth0", "eth1"}));
  const Nic& ib0 = *findNic(t, "ib0");
  EXPECT_EQ(ib0.rdma_device, "mlx5_0");
  EXPECT_EQ(ib0.link, LinkKind::kInfiniband);
  EXPECT_EQ(findNic(t, "eth0")->link, LinkKind::kEthernet);
  // ib0 sits below root port 0000:80:03.0 with the K40 and the Radeon.
  EXPECT_EQ(distance(*findAccelerator(t, "0000:84:00.0"), ib0), Distance::kSamePciSwitch);
  EXPECT_EQ(distance(*findAccelerator(t, "0000:84:00.1"), ib0), Distance::kSamePciSwitch);
  EXPECT_EQ(distance(*findAccelerator(t, "0000:83:00.0"), ib0), Distance::kSameHostBridge);
  EXPECT_EQ(distance(*findAccelerator(t, "0000:03:00.0"), ib0), Distance::kOtherSocket);
}

// POWER8 with four P100 on NVLink, one host bridge per GPU, no NIC.
TEST(TopologyPower8, FourGpusTwoPerSocketNoNics) {
  NodeTopology t = loadFixture("power8gpudistances.xml");
  EXPECT_EQ(t.packages, 2u);
  EXPECT_EQ(t.pus, 16u);
  ASSERT_EQ(t.numa_nodes.size(), 2u);
  EXPECT_EQ(busIds(t), (std::vector<std::string>{"0002:01:00.0", "0003:01:00.0", "000a:01:00.0",
                                                 "000b:01:00.0"}));
  const std::vector<unsigned> numa = {0, 0, 1, 1};
  for (unsigned i = 0; i < 4; ++i) {
    const Accelerator& a = t.accelerators[i];
    EXPECT_EQ(a.model, "Tesla P100-SXM2-16GB");
    EXPECT_EQ(a.locality.numa_nodes, std::vector<unsigned>{numa[i]});
    EXPECT_EQ(a.os_devices.size(), 3u);
  }
  EXPECT_TRUE(t.nics.empty());
  EXPECT_TRUE(nearestNics(t, t.accelerators[0]).empty());
}

}  // namespace
}  // namespace accel::topology
