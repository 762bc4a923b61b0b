#include "topology_test_util.h"

#include <gtest/gtest.h>

#include "accel/topology/loader.h"

namespace accel::topology::testing {

NodeTopology loadFixture(const std::string& name) {
  LoadOptions options;
  options.xml_path = std::string(ACCEL_HW_MOCK_DIR) + "/topologies/" + name;
  auto loaded = loadTopology(options);
  if (!loaded.ok()) {
    ADD_FAILURE() << name << ": " << loaded.error().message();
    return {};
  }
  return std::move(loaded).value();
}

const Accelerator* findAccelerator(const NodeTopology& topology, std::string_view bus_id) {
  for (const auto& accelerator : topology.accelerators) {
    if (accelerator.pci_bus_id == bus_id) return &accelerator;
  }
  return nullptr;
}

const Nic* findNic(const NodeTopology& topology, std::string_view name) {
  for (const auto& nic : topology.nics) {
    if (nic.netdev == name || (nic.netdev.empty() && nic.rdma_device == name)) return &nic;
  }
  return nullptr;
}

std::string machineXml(std::string_view io, std::string_view machine_io) {
  std::string xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x1" complete_cpuset="0x1" allowed_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1" allowed_nodeset="0x1" gp_index="1">
    <object type="Package" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1" gp_index="2">
      <object type="NUMANode" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1" gp_index="3" local_memory="1073741824"/>
      <object type="Core" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1" gp_index="4">
        <object type="PU" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1" gp_index="5"/>
      </object>
)";
  xml += io;
  xml += "    </object>\n";
  xml += machine_io;
  xml += "  </object>\n</topology>\n";
  return xml;
}

}  // namespace accel::topology::testing
