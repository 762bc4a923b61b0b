// The live machine. Nothing about its hardware is assumed; the model must
// agree with what the kernel says.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "accel/topology/loader.h"

namespace accel::topology {
namespace {

namespace fs = std::filesystem;

unsigned countCpus(const std::string& list) {
  unsigned count = 0;
  std::size_t pos = 0;
  while (pos < list.size()) {
    std::size_t end = list.find(',', pos);
    std::string range = list.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    std::size_t dash = range.find('-');
    unsigned first = std::stoul(range.substr(0, dash));
    unsigned last = dash == std::string::npos ? first : std::stoul(range.substr(dash + 1));
    count += last - first + 1;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return count;
}

TEST(TopologyLive, LoadsAndAgreesWithTheKernel) {
  auto loaded = loadTopology({});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  const NodeTopology& t = *loaded;
  EXPECT_GE(t.numa_nodes.size(), 1u);
  EXPECT_GE(t.pus, 1u);
  EXPECT_GE(t.cores, 1u);
  EXPECT_LE(t.cores, t.pus);
  EXPECT_EQ(t.pus, static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN)));
  unsigned numa_cpus = 0;
  for (const auto& node : t.numa_nodes) numa_cpus += countCpus(node.cpus);
  EXPECT_EQ(numa_cpus, t.pus);
}

TEST(TopologyLive, DevicesExistInSysfs) {
  auto loaded = loadTopology({});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  // An empty list is a valid answer (this machine may have no accelerator);
  // whatever is listed must be real.
  for (const auto& a : loaded->accelerators) {
    if (!a.pci_bus_id) continue;
    std::ifstream klass("/sys/bus/pci/devices/" + *a.pci_bus_id + "/class");
    std::string value;
    ASSERT_TRUE(klass >> value) << *a.pci_bus_id;
    EXPECT_EQ(std::stoul(value, nullptr, 16) >> 8, a.pci_class_id) << *a.pci_bus_id;
  }
  for (const auto& nic : loaded->nics) {
    if (!nic.netdev.empty()) {
      EXPECT_TRUE(fs::exists("/sys/class/net/" + nic.netdev)) << nic.netdev;
    }
    if (nic.pci_bus_id) {
      EXPECT_TRUE(fs::exists("/sys/bus/pci/devices/" + *nic.pci_bus_id)) << *nic.pci_bus_id;
    }
  }
}

}  // namespace
}  // namespace accel::topology
