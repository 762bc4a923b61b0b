#include "accel/topology/pci_ids.h"

#include <array>
#include <cstdio>
#include <utility>

namespace accel::topology::pci {
namespace {

struct VendorEntry {
  std::uint16_t id;
  const char* name;
};

// Only vendors the agent meets on accelerator nodes; the rest print as hex.
constexpr std::array kVendors = {
    VendorEntry{kVendorNvidia, "NVIDIA"},
    VendorEntry{kVendorAmdGraphics, "AMD"},
    VendorEntry{kVendorAmd, "AMD"},
    VendorEntry{kVendorIntel, "Intel"},
    VendorEntry{kVendorGraphcore, "Graphcore"},
    VendorEntry{kVendorHabana, "Habana"},
    VendorEntry{0x1de0, "Groq"},
    VendorEntry{0x17cb, "Qualcomm"},
    VendorEntry{0x19e5, "Huawei"},
    VendorEntry{0x10ee, "Xilinx"},
    VendorEntry{kVendorMellanox, "Mellanox"},
    VendorEntry{kVendorCray, "Cray"},
    VendorEntry{kVendorCornelis, "Cornelis"},
    VendorEntry{0x14e4, "Broadcom"},
    VendorEntry{0x1d0f, "Amazon"},
    VendorEntry{0x1af4, "Red Hat"},
    VendorEntry{0x119f, "Bull"},
    VendorEntry{kVendorAspeed, "ASPEED"},
    VendorEntry{kVendorMatrox, "Matrox"},
};

// (vendor, device) pairs; device 0 matches every device of the vendor.
constexpr std::array<std::pair<std::uint16_t, std::uint16_t>, 9> kNonComputeDisplays = {{
    {kVendorAspeed, 0},  // AST BMC graphics
    {kVendorMatrox, 0},  // G200 variants on iLO / iDRAC / XCC boards
    {0x19a2, 0},         // Emulex (ServerEngines) Pilot BMC
    {0x19e5, 0x1711},    // Huawei Hi171x BMC; other Huawei ids are NPUs
    {0x1234, 0},         // QEMU standard VGA
    {0x1af4, 0},         // virtio-gpu
    {0x15ad, 0},         // VMware SVGA
    {0x1013, 0},         // Cirrus Logic (emulated)
    {0x1414, 0},         // Microsoft Hyper-V
}};

}  // namespace

bool isGpuVendor(std::uint16_t vendor_id) {
  return vendor_id == kVendorNvidia || vendor_id == kVendorAmdGraphics;
}

bool isNonComputeDisplay(std::uint16_t vendor_id, std::uint16_t device_id) {
  for (const auto& [vendor, device] : kNonComputeDisplays) {
    if (vendor == vendor_id && (device == 0 || device == device_id)) return true;
  }
  return false;
}

bool isAcceleratorByIds(std::uint16_t class_id, std::uint16_t vendor_id, std::uint16_t device_id) {
  if (isNonComputeDisplay(vendor_id, device_id)) return false;
  switch (class_id) {
    case kClass3d:
    case kClassDisplayOther:
    case kClassProcessingAccelerator:
      return true;
    case kClassVga:
      return isGpuVendor(vendor_id);
    default:
      return false;
  }
}

const char* vendorName(std::uint16_t vendor_id) {
  for (const auto& entry : kVendors) {
    if (entry.id == vendor_id) return entry.name;
  }
  return nullptr;
}

std::string vendorLabel(std::uint16_t vendor_id) {
  if (const char* name = vendorName(vendor_id)) return name;
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", vendor_id);
  return buf;
}

}  // namespace accel::topology::pci
