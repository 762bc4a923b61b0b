// Which network devices are NICs and how they reach the fabric. A NIC is a
// kernel network interface (or a bare RDMA device) on a PCI network
// function; virtual and USB interfaces have no such function and are left
// out. The link kind comes from hints, strongest first.
#include <algorithm>
#include <cctype>
#include <string>
#include <tuple>
#include <vector>

#include "accel/topology/pci_ids.h"
#include "classify_internal.h"

namespace accel::topology::detail {
namespace {

bool hasType(const PciRecord& record, OsDeviceType type) {
  return std::any_of(record.os_devices.begin(), record.os_devices.end(),
                     [type](const OsDeviceRecord& d) { return d.type == type; });
}

// Network controllers, old-style InfiniBand, unclassified functions (Atos
// BXI reports class 0), or anything carrying an RDMA device. Excludes e.g.
// USB controllers, whose cdc_ether gadgets (BMC host interfaces) are not
// fabric NICs.
bool carriesNics(const PciRecord& record) {
  std::uint8_t base = pci::baseClass(record.class_id);
  return base == 0x02 || base == 0x00 || record.class_id == pci::kClassSerialInfiniband ||
         hasType(record, OsDeviceType::kOpenFabrics);
}

// Number of bytes in a hardware address such as "0c:42:a1:..": 6 for
// Ethernet, 20 for IPoIB; 0 when empty.
std::size_t addressBytes(const std::string& address) {
  if (address.empty()) return 0;
  return static_cast<std::size_t>(std::count(address.begin(), address.end(), ':')) + 1;
}

// "cxi0": HPE's Slingshot device, exported by hwloc 2.14 and later.
bool isCxiName(const std::string& name) {
  return startsWith(name, "cxi") && name.size() > 3 &&
         std::isdigit(static_cast<unsigned char>(name[3]));
}

bool isSlingshot(const PciRecord& record, const OsDeviceRecord* netdev) {
  if (record.vendor_id == pci::kVendorCray) return true;
  for (const auto& device : record.os_devices) {
    if (equalsIgnoreCase(device.subtype, "Slingshot") || equalsIgnoreCase(device.subtype, "CXI") ||
        isCxiName(device.name)) {
      return true;
    }
  }
  // HPE names Slingshot interfaces hsn<N> on Cray EX systems, including
  // Slingshot-10 nodes whose NICs are Mellanox cards.
  return netdev != nullptr && startsWith(netdev->name, "hsn");
}

bool isOmniPath(const PciRecord& record, const OsDeviceRecord* rdma) {
  if (record.vendor_id == pci::kVendorCornelis) return true;
  if (record.vendor_id == pci::kVendorIntel &&
      (record.device_id == 0x24f0 || record.device_id == 0x24f1)) {
    return true;
  }
  return rdma != nullptr && startsWith(rdma->name, "hfi1_");
}

LinkKind linkKindOf(const PciRecord& record, const OsDeviceRecord* netdev,
                    const OsDeviceRecord* rdma) {
  if (isSlingshot(record, netdev)) return LinkKind::kSlingshot;
  if (isOmniPath(record, rdma)) return LinkKind::kOmniPath;
  // The address beats the class: ConnectX VPI ports keep their InfiniBand
  // class in Ethernet mode but carry a 6-byte MAC.
  std::size_t bytes = netdev != nullptr ? addressBytes(netdev->info("Address")) : 0;
  if (bytes == 20) return LinkKind::kInfiniband;
  if (bytes == 6) return LinkKind::kEthernet;
  if (record.class_id == pci::kClassInfiniband || record.class_id == pci::kClassSerialInfiniband) {
    return LinkKind::kInfiniband;
  }
  if (record.class_id == pci::kClassEthernet) return LinkKind::kEthernet;
  return LinkKind::kOther;
}

Nic makeNic(const PciRecord& record, const OsDeviceRecord* netdev, const OsDeviceRecord* rdma) {
  Nic nic;
  if (netdev != nullptr) {
    nic.netdev = netdev->name;
    nic.address = netdev->info("Address");
  }
  if (rdma != nullptr) nic.rdma_device = rdma->name;
  nic.pci_bus_id = record.bus_id;
  nic.pci_vendor_id = record.vendor_id;
  nic.pci_device_id = record.device_id;
  nic.pci_class_id = record.class_id;
  nic.link = linkKindOf(record, netdev, rdma);
  nic.locality = record.locality;
  return nic;
}

std::vector<const OsDeviceRecord*> devicesOfType(const PciRecord& record, OsDeviceType type) {
  std::vector<const OsDeviceRecord*> found;
  for (const auto& device : record.os_devices) {
    if (device.type == type) found.push_back(&device);
  }
  std::sort(found.begin(), found.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return found;
}

// One NIC per netdev of the function. The function's RDMA device goes with
// it: one RDMA device serves every port (mlx4), and when the counts match
// they pair up in name order. A function with RDMA devices but no netdev
// still yields one NIC per RDMA device.
void addNicsOf(const PciRecord& record, std::vector<Nic>& nics) {
  auto netdevs = devicesOfType(record, OsDeviceType::kNetwork);
  auto rdmas = devicesOfType(record, OsDeviceType::kOpenFabrics);
  if (netdevs.empty()) {
    for (const auto* rdma : rdmas) nics.push_back(makeNic(record, nullptr, rdma));
    return;
  }
  for (std::size_t i = 0; i < netdevs.size(); ++i) {
    const OsDeviceRecord* rdma = nullptr;
    if (!rdmas.empty()) rdma = rdmas.size() == netdevs.size() ? rdmas[i] : rdmas.front();
    nics.push_back(makeNic(record, netdevs[i], rdma));
  }
}

}  // namespace

std::vector<Nic> findNics(const Inventory& inventory) {
  std::vector<Nic> nics;
  for (const auto& record : inventory.pci) {
    if (carriesNics(record)) addNicsOf(record, nics);
  }
  std::sort(nics.begin(), nics.end(), [](const Nic& a, const Nic& b) {
    return std::tie(*a.pci_bus_id, a.netdev, a.rdma_device) <
           std::tie(*b.pci_bus_id, b.netdev, b.rdma_device);
  });
  for (std::size_t i = 0; i < nics.size(); ++i) nics[i].index = static_cast<unsigned>(i);
  return nics;
}

}  // namespace accel::topology::detail
