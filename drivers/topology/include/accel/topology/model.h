#pragma once
// The node as the agent sees it: NUMA nodes, CPU counts, accelerators and
// NICs, in plain value types. Nothing here knows about hwloc; the hwloc
// adapter (loader.h) fills these, and everything downstream (device
// selection, NIC affinity, rendering) works on them alone.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accel::topology {

enum class AcceleratorKind { kGpu, kIpu, kOther };

// How a NIC reaches the fabric. Derived from hints (PCI ids, hardware address
// length, OS device names and subtypes); kOther when nothing is conclusive.
enum class LinkKind { kEthernet, kInfiniband, kSlingshot, kOmniPath, kOther };

// Stable lower-case names used in JSON and tables: "gpu", "ipu", "other";
// "ethernet", "infiniband", "slingshot", "omnipath", "other".
const char* acceleratorKindName(AcceleratorKind kind);
const char* linkKindName(LinkKind kind);

struct NumaNode {
  unsigned os_index = 0;
  std::uint64_t memory_bytes = 0;
  // CPUs local to this node as a list such as "0-7,16-23". hwloc gives a
  // memory-only node (CXL, HBM in flat mode) the CPUs of the object it
  // hangs from.
  std::string cpus;
};

// Where a device sits, as far as hwloc knows. Accelerators and NICs share
// these fields so that distance() can compare any pair.
struct Locality {
  // NUMA nodes (os indexes, ascending) local to the device.
  std::vector<unsigned> numa_nodes;
  // Packages (sockets, os indexes, ascending) whose CPUs are local to it.
  std::vector<unsigned> packages;
  // True when hwloc knew no finer locality than the whole machine on a
  // machine with several NUMA nodes (the kernel reported no NUMA affinity
  // for the bus). numa_nodes then lists every node and means "unknown".
  bool machine_wide = false;
  // The host bridge the device hangs from, as "dddd:[bb-bb]" (PCI domain and
  // bus range); empty when the device is not on PCI or hwloc knew no bridge.
  std::string pci_host_bridge;
  // Bus ids of the PCI-to-PCI bridges between the host bridge and the
  // device, upstream first. Root ports count: two devices below the same
  // root port share a switch (or are functions of one card).
  std::vector<std::string> pci_bridges;
};

struct Accelerator {
  // Position in NodeTopology::accelerators: PCI devices by bus id first,
  // then devices without PCI identity by first OS device name. Stable for a
  // given machine, whatever order hwloc walked it in.
  unsigned index = 0;
  AcceleratorKind kind = AcceleratorKind::kOther;
  std::string vendor;               // "NVIDIA", "AMD", "Intel", "Graphcore", ... or "0x1e52"
  std::string model;                // hwloc's GPUModel or PCI device name; may be empty
  std::uint16_t pci_vendor_id = 0;  // zero when the device is not on PCI
  std::uint16_t pci_device_id = 0;
  std::uint16_t pci_class_id = 0;
  // "0000:04:00.0"; none for an APU or co-processor hwloc knows only through
  // a runtime (OS device without a PCI parent).
  std::optional<std::string> pci_bus_id;
  // OS devices of this one device, sorted: e.g. card1, cuda0, nvml0,
  // opencl0d0, renderD129. May be empty (a PCI device no runtime reported).
  std::vector<std::string> os_devices;
  Locality locality;
};

struct Nic {
  // Position in NodeTopology::nics, ordered by PCI bus id then netdev.
  unsigned index = 0;
  // Kernel interface name (ib0, eth0, hsn0). Empty for an RDMA device that
  // has no network interface (e.g. an Omni-Path HFI without IPoIB).
  std::string netdev;
  std::optional<std::string> rdma_device;  // mlx5_0, hfi1_0, ... when there is one
  std::optional<std::string> pci_bus_id;
  std::uint16_t pci_vendor_id = 0;
  std::uint16_t pci_device_id = 0;
  std::uint16_t pci_class_id = 0;
  LinkKind link = LinkKind::kOther;
  std::string address;  // hardware address as hwloc reports it; may be empty
  Locality locality;
};

struct NodeTopology {
  std::string hostname;              // as recorded by hwloc; empty when unknown
  std::vector<NumaNode> numa_nodes;  // ascending os_index
  unsigned packages = 0;
  unsigned cores = 0;
  unsigned pus = 0;
  // Empty is a valid answer: a node without accelerators or NICs.
  std::vector<Accelerator> accelerators;
  std::vector<Nic> nics;
};

}  // namespace accel::topology
