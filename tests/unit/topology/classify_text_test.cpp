// Classification rules on literal hwloc XML: small machines with exactly the
// devices each rule is about, loaded through the real adapter.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "accel/topology/loader.h"
#include "accel/topology/render.h"
#include "topology_test_util.h"

namespace accel::topology {
namespace {

using testing::findNic;
using testing::machineXml;

std::string info(std::string_view name, std::string_view value) {
  return "<info name=\"" + std::string(name) + "\" value=\"" + std::string(value) + "\"/>";
}

// osdev_type in hwloc 2 XML: 0 block, 1 GPU, 2 network, 3 OpenFabrics,
// 4 DMA, 5 co-processor.
std::string osDev(int gp, std::string_view name, int type, std::string_view subtype = "",
                  std::string_view children = "") {
  std::string xml = "<object type=\"OSDev\" gp_index=\"" + std::to_string(gp) + "\" name=\"" +
                    std::string(name) + "\"";
  if (!subtype.empty()) xml += " subtype=\"" + std::string(subtype) + "\"";
  return xml + " osdev_type=\"" + std::to_string(type) + "\">" + std::string(children) +
         "</object>\n";
}

// `ids` is "cccc [vvvv:dddd]", e.g. "0302 [10de:2330]".
std::string pciDev(int gp, std::string_view bus, std::string_view ids,
                   std::string_view children = "") {
  return "<object type=\"PCIDev\" gp_index=\"" + std::to_string(gp) + "\" pci_busid=\"" +
         std::string(bus) + "\" pci_type=\"" + std::string(ids) +
         " [0000:0000] 00\" pci_link_speed=\"0.000000\">" + std::string(children) + "</object>\n";
}

std::string hostBridge(std::string_view children) {
  return "<object type=\"Bridge\" gp_index=\"10\" bridge_type=\"0-1\" depth=\"0\" "
         "bridge_pci=\"0000:[00-7f]\">\n" +
         std::string(children) + "</object>\n";
}

NodeTopology load(const std::string& xml) {
  auto loaded = loadTopologyFromXmlText(xml);
  if (!loaded.ok()) {
    ADD_FAILURE() << loaded.error().message();
    return {};
  }
  return std::move(loaded).value();
}

NodeTopology loadPci(std::string_view devices) { return load(machineXml(hostBridge(devices))); }

constexpr const char* kMac = "0c:42:a1:00:00:01";
constexpr const char* kIpoib = "00:00:10:87:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:00:00:01";

TEST(TopologyClassify, BmcAndHypervisorDisplaysAreNotAccelerators) {
  NodeTopology t = loadPci(pciDev(11, "0000:01:00.0", "0300 [1a03:2000]", osDev(20, "card0", 1)) +
                           pciDev(12, "0000:02:00.0", "0300 [102b:0536]") +
                           pciDev(13, "0000:03:00.0", "0380 [1af4:1050]") +
                           // VGA of a vendor that is not a GPU vendor, and no compute
                           // runtime device on it: a display.
                           pciDev(14, "0000:04:00.0", "0300 [8086:56a0]"));
  EXPECT_TRUE(t.accelerators.empty());
  EXPECT_NE(renderTable(t).find("no accelerators found on this node"), std::string::npos);
}

TEST(TopologyClassify, VgaOfAGpuVendorIsAGpu) {
  NodeTopology t = loadPci(pciDev(11, "0000:01:00.0", "0300 [10de:2204]") +
                           pciDev(12, "0000:02:00.0", "0300 [1002:73bf]"));
  ASSERT_EQ(t.accelerators.size(), 2u);
  EXPECT_EQ(t.accelerators[0].vendor, "NVIDIA");
  EXPECT_EQ(t.accelerators[1].vendor, "AMD");
  EXPECT_EQ(t.accelerators[1].kind, AcceleratorKind::kGpu);
}

TEST(TopologyClassify, ProcessingAcceleratorsByVendor) {
  NodeTopology t = loadPci(pciDev(11, "0000:01:00.0", "1200 [1d95:0002]") +
                           pciDev(12, "0000:02:00.0", "1200 [1da3:1020]") +
                           pciDev(13, "0000:03:00.0", "1200 [1e52:401e]") +
                           pciDev(14, "0000:04:00.0", "1201 [8086:0b25]"));  // SDXI data mover
  ASSERT_EQ(t.accelerators.size(), 3u);
  EXPECT_EQ(t.accelerators[0].kind, AcceleratorKind::kIpu);
  EXPECT_EQ(t.accelerators[0].vendor, "Graphcore");
  EXPECT_TRUE(t.accelerators[0].os_devices.empty());
  EXPECT_EQ(t.accelerators[1].kind, AcceleratorKind::kOther);
  EXPECT_EQ(t.accelerators[1].vendor, "Habana");
  EXPECT_EQ(t.accelerators[2].vendor, "0x1e52");
  EXPECT_EQ(t.accelerators[2].pci_bus_id, "0000:03:00.0");
}

TEST(TopologyClassify, CoprocessorClassNeedsARuntimeDevice) {
  NodeTopology t = loadPci(pciDev(11, "0000:01:00.0", "0b40 [8086:4940]") +  // QAT
                           pciDev(12, "0000:02:00.0", "0b40 [8086:2250]",    // Xeon Phi
                                  osDev(20, "mic0", 5, "MIC")));
  ASSERT_EQ(t.accelerators.size(), 1u);
  EXPECT_EQ(t.accelerators[0].pci_bus_id, "0000:02:00.0");
  EXPECT_EQ(t.accelerators[0].vendor, "Intel");
  EXPECT_EQ(t.accelerators[0].kind, AcceleratorKind::kOther);
  EXPECT_EQ(t.accelerators[0].os_devices, std::vector<std::string>{"mic0"});
}

TEST(TopologyClassify, OsDevicesWithoutPciParentFormApus) {
  std::string loose = osDev(20, "cuda0", 5, "CUDA",
                            info("GPUVendor", "NVIDIA Corporation") + info("GPUModel", "Orin")) +
                      osDev(21, "nvml0", 1, "NVML") +
                      osDev(22, "rsmi1", 1, "RSMI", info("GPUVendor", "AMD")) +
                      osDev(23, "docker0", 2);  // a virtual interface: neither accelerator nor NIC
  NodeTopology t = load(machineXml("", loose));
  ASSERT_EQ(t.accelerators.size(), 2u);
  const Accelerator& orin = t.accelerators[0];
  EXPECT_FALSE(orin.pci_bus_id.has_value());
  EXPECT_EQ(orin.os_devices, (std::vector<std::string>{"cuda0", "nvml0"}));
  EXPECT_EQ(orin.vendor, "NVIDIA");
  EXPECT_EQ(orin.model, "Orin");
  EXPECT_EQ(orin.kind, AcceleratorKind::kGpu);
  EXPECT_EQ(orin.locality.numa_nodes, std::vector<unsigned>{0});
  EXPECT_EQ(t.accelerators[1].os_devices, std::vector<std::string>{"rsmi1"});
  EXPECT_EQ(t.accelerators[1].vendor, "AMD");
  EXPECT_TRUE(t.nics.empty());
}

// As captured on an H200 virtual machine: hwloc's OpenCL device could not be
// tied to its PCI function and hangs beside it; it is the same GPU, not a
// second one, and it names the model the PCI function does not.
TEST(TopologyClassify, UntiedRuntimeDeviceIsTheSamePciGpu) {
  std::string opencl =
      osDev(20, "opencl0d0", 5, "OpenCL",
            info("OpenCLDeviceType", "GPU") + info("GPUVendor", "NVIDIA Corporation") +
                info("GPUModel", "NVIDIA H200"));
  NodeTopology t = loadPci(pciDev(11, "0000:00:06.0", "0302 [10de:2335]") + opencl);
  ASSERT_EQ(t.accelerators.size(), 1u);
  EXPECT_EQ(t.accelerators[0].pci_bus_id, "0000:00:06.0");
  EXPECT_EQ(t.accelerators[0].model, "NVIDIA H200");
  EXPECT_EQ(t.accelerators[0].kind, AcceleratorKind::kGpu);

  // Two models among the functions: which one the runtime device is cannot
  // be told, so neither gets its name; still two GPUs, not three.
  t = loadPci(pciDev(11, "0000:01:00.0", "0302 [10de:2335]") +
              pciDev(12, "0000:02:00.0", "0302 [10de:2330]") + opencl);
  ASSERT_EQ(t.accelerators.size(), 2u);
  EXPECT_EQ(t.accelerators[0].model, "");
  EXPECT_EQ(t.accelerators[1].model, "");

  // Another vendor's PCI GPU does not absorb it.
  t = loadPci(pciDev(11, "0000:01:00.0", "0300 [1002:73bf]") + opencl);
  ASSERT_EQ(t.accelerators.size(), 2u);
  EXPECT_EQ(t.accelerators[1].model, "NVIDIA H200");
  EXPECT_FALSE(t.accelerators[1].pci_bus_id.has_value());
}

TEST(TopologyClassify, SubdevicesFoldIntoTheirDevice) {
  std::string ze = osDev(20, "ze0", 5, "LevelZero",
                         osDev(21, "ze0.0", 5, "LevelZero") + osDev(22, "ze0.1", 5, "LevelZero"));
  NodeTopology t = loadPci(pciDev(11, "0000:01:00.0", "0380 [8086:0bd5]", ze));
  ASSERT_EQ(t.accelerators.size(), 1u);
  EXPECT_EQ(t.accelerators[0].os_devices, std::vector<std::string>{"ze0"});
  EXPECT_EQ(t.accelerators[0].vendor, "Intel");
}

TEST(TopologyClassify, InfinibandRoceAndVpiInEthernetMode) {
  NodeTopology t = loadPci(
      pciDev(11, "0000:01:00.0", "0207 [15b3:101b]",
             osDev(20, "ib0", 2, "", info("Address", kIpoib)) + osDev(21, "mlx5_0", 3)) +
      pciDev(12, "0000:02:00.0", "0200 [15b3:1017]",
             osDev(22, "ens2f0np0", 2, "", info("Address", kMac)) + osDev(23, "mlx5_1", 3)) +
      pciDev(13, "0000:03:00.0", "0207 [15b3:101b]",
             osDev(24, "ens3", 2, "", info("Address", kMac)) + osDev(25, "mlx5_2", 3)));
  ASSERT_EQ(t.nics.size(), 3u);
  EXPECT_EQ(findNic(t, "ib0")->link, LinkKind::kInfiniband);
  EXPECT_EQ(findNic(t, "ib0")->rdma_device, "mlx5_0");
  EXPECT_EQ(findNic(t, "ens2f0np0")->link, LinkKind::kEthernet);
  EXPECT_EQ(findNic(t, "ens2f0np0")->rdma_device, "mlx5_1");
  EXPECT_EQ(findNic(t, "ens3")->link, LinkKind::kEthernet);
}

TEST(TopologyClassify, SlingshotHints) {
  NodeTopology t =
      loadPci(pciDev(11, "0000:01:00.0", "0200 [17db:0501]",
                     osDev(20, "hsi0", 2, "", info("Address", kMac))) +
              // Slingshot-10: a Mellanox Ethernet card named hsn0 by HPE's udev rules.
              pciDev(12, "0000:02:00.0", "0200 [15b3:1017]",
                     osDev(21, "hsn0", 2, "", info("Address", kMac)) + osDev(22, "mlx5_0", 3)) +
              // A cxi OS device, as hwloc 2.14 and later export them.
              pciDev(13, "0000:03:00.0", "0200 [1590:0001]",
                     osDev(23, "eth3", 2, "", info("Address", kMac)) + osDev(24, "cxi0", 3)) +
              pciDev(14, "0000:04:00.0", "0200 [1590:0001]",
                     osDev(25, "eth4", 2, "Slingshot", info("Address", kMac))));
  for (const char* name : {"hsi0", "hsn0", "eth3", "eth4"}) {
    ASSERT_NE(findNic(t, name), nullptr) << name;
    EXPECT_EQ(findNic(t, name)->link, LinkKind::kSlingshot) << name;
  }
  EXPECT_EQ(findNic(t, "eth3")->rdma_device, "cxi0");
}

TEST(TopologyClassify, OmniPathWithAndWithoutIpoib) {
  NodeTopology t =
      loadPci(pciDev(11, "0000:01:00.0", "0208 [8086:24f0]",
                     osDev(20, "ib0", 2, "", info("Address", kIpoib)) + osDev(21, "hfi1_0", 3)) +
              pciDev(12, "0000:02:00.0", "0208 [434e:0001]", osDev(22, "hfi1_1", 3)));
  ASSERT_EQ(t.nics.size(), 2u);
  EXPECT_EQ(t.nics[0].netdev, "ib0");
  EXPECT_EQ(t.nics[0].link, LinkKind::kOmniPath);
  EXPECT_EQ(t.nics[1].netdev, "");
  EXPECT_EQ(t.nics[1].rdma_device, "hfi1_1");
  EXPECT_EQ(t.nics[1].link, LinkKind::kOmniPath);
}

TEST(TopologyClassify, OneRdmaDeviceServesBothPortsOfAFunction) {
  NodeTopology t = loadPci(pciDev(11, "0000:01:00.0", "0c06 [15b3:1003]",
                                  osDev(20, "ib1", 2, "", info("Address", kIpoib)) +
                                      osDev(21, "ib0", 2, "", info("Address", kIpoib)) +
                                      osDev(22, "mlx4_0", 3)));
  ASSERT_EQ(t.nics.size(), 2u);
  EXPECT_EQ(t.nics[0].netdev, "ib0");
  EXPECT_EQ(t.nics[1].netdev, "ib1");
  EXPECT_EQ(t.nics[0].rdma_device, "mlx4_0");
  EXPECT_EQ(t.nics[1].rdma_device, "mlx4_0");
  EXPECT_EQ(t.nics[1].link, LinkKind::kInfiniband);
}

TEST(TopologyClassify, UsbNetworkGadgetsAreNotNics) {
  // A BMC host interface (cdc_ether) below an xHCI controller.
  NodeTopology t = loadPci(pciDev(11, "0000:01:00.0", "0c03 [8086:a36d]",
                                  osDev(20, "usb0", 2, "", info("Address", kMac))));
  EXPECT_TRUE(t.nics.empty());
  EXPECT_NE(renderTable(t).find("no NICs found on this node"), std::string::npos);
}

TEST(TopologyClassify, IndexesFollowBusIdsNotDiscoveryOrder) {
  NodeTopology t = loadPci(pciDev(11, "0000:09:00.0", "0302 [10de:2330]") +
                           pciDev(12, "0000:02:00.0", "0302 [10de:2330]") +
                           pciDev(13, "0000:08:00.0", "0200 [8086:1537]", osDev(20, "eth1", 2)) +
                           pciDev(14, "0000:03:00.0", "0200 [8086:1537]", osDev(21, "eth0", 2)));
  ASSERT_EQ(t.accelerators.size(), 2u);
  EXPECT_EQ(t.accelerators[0].pci_bus_id, "0000:02:00.0");
  EXPECT_EQ(t.accelerators[1].index, 1u);
  ASSERT_EQ(t.nics.size(), 2u);
  EXPECT_EQ(t.nics[0].netdev, "eth0");
  EXPECT_EQ(t.nics[1].index, 1u);
  EXPECT_EQ(t.nics[0].link, LinkKind::kEthernet);  // no address: the class decides
}

}  // namespace
}  // namespace accel::topology
