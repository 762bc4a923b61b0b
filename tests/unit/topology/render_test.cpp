#include "accel/topology/render.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "accel/topology/loader.h"
#include "topology_test_util.h"

namespace accel::topology {
namespace {

TEST(TopologyRender, FormatIndexList) {
  EXPECT_EQ(formatIndexList({}), "");
  EXPECT_EQ(formatIndexList({3}), "3");
  EXPECT_EQ(formatIndexList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
}

TEST(TopologyRender, JsonOfIpa20) {
  NodeTopology t = testing::loadFixture("ipa20.xml");
  auto doc = nlohmann::json::parse(renderJson(t));
  ASSERT_EQ(doc["numa_nodes"].size(), 8u);
  EXPECT_EQ(doc["numa_nodes"][3]["os_index"], 3);
  EXPECT_EQ(doc["numa_nodes"][0]["memory_bytes"], 540245127168u);
  EXPECT_EQ(doc["numa_nodes"][0]["cpus"], "0-13,112-125");
  EXPECT_EQ(doc["pus"], 224);

  const auto& gpu = doc["accelerators"][0];
  EXPECT_EQ(gpu["vendor"], "NVIDIA");
  EXPECT_EQ(gpu["kind"], "gpu");
  EXPECT_EQ(gpu["pci_bus_id"], "0000:4e:00.0");
  EXPECT_EQ(gpu["pci_id"], "10de:2330");
  EXPECT_EQ(gpu["os_devices"], nlohmann::json({"cuda0", "nvml0", "opencl0d0"}));
  EXPECT_EQ(gpu["numa_nodes"], nlohmann::json({3}));
  EXPECT_EQ(gpu["nearest_nics"][0]["rdma_device"], "mlx5_0");
  EXPECT_EQ(gpu["nearest_nics"][0]["distance"], "pci-switch");
  EXPECT_EQ(gpu["nearest_nics"][0]["rank"], 0);

  const auto& eth = doc["nics"][0];
  EXPECT_EQ(eth["netdev"], "eno8303");
  EXPECT_TRUE(eth["rdma_device"].is_null());
  EXPECT_EQ(eth["link"], "ethernet");
  EXPECT_EQ(doc["nics"][2]["rdma_device"], "mlx5_0");
  EXPECT_EQ(doc["nics"][2]["link"], "infiniband");
  EXPECT_EQ(doc["nics"][2]["numa_nodes"], nlohmann::json({3}));
}

TEST(TopologyRender, JsonOfAnApuHasNullBusId) {
  auto loaded = loadTopologyFromXmlText(
      testing::machineXml("",
                          "<object type=\"OSDev\" gp_index=\"20\" name=\"rsmi0\" subtype=\"RSMI\" "
                          "osdev_type=\"1\"/>\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  auto doc = nlohmann::json::parse(renderJson(*loaded, -1));
  ASSERT_EQ(doc["accelerators"].size(), 1u);
  EXPECT_TRUE(doc["accelerators"][0]["pci_bus_id"].is_null());
  EXPECT_TRUE(doc["accelerators"][0]["pci_id"].is_null());
  EXPECT_EQ(doc["accelerators"][0]["nearest_nics"], nlohmann::json::array());
  EXPECT_EQ(doc["nics"], nlohmann::json::array());
}

TEST(TopologyRender, TableSectionsAndNearestNic) {
  std::string table = renderTable(testing::loadFixture("ipa20.xml"));
  EXPECT_EQ(table.rfind("testhost-nvidia: 2 packages, 112 cores, 224 PUs, 8 NUMA nodes\n", 0), 0u)
      << table;
  for (const char* expected : {"NUMA nodes\n", "Accelerators\n", "NICs\n", "NEAREST NIC",
                               "0000:4e:00.0", "cuda0,nvml0,opencl0d0", "hsi0 +1 (pci-switch)",
                               "ibp218s0 (package)", "mlx5_3", "infiniband", "503.1 GiB"}) {
    EXPECT_NE(table.find(expected), std::string::npos) << expected << "\n" << table;
  }
}

TEST(TopologyRender, TableSaysPlainlyWhenThereAreNoAccelerators) {
  NodeTopology empty;
  std::string table = renderTable(empty);
  EXPECT_NE(table.find("no accelerators found on this node"), std::string::npos) << table;
  EXPECT_NE(table.find("no NICs found on this node"), std::string::npos) << table;
  EXPECT_NE(table.find("this node: 0 packages"), std::string::npos) << table;
}

}  // namespace
}  // namespace accel::topology
