#pragma once
// PCI identities the classification relies on, and the rules that need only
// ids. Vendor ids checked against pci.ids (Debian package pci.ids 2023.04).
#include <cstdint>
#include <string>

namespace accel::topology::pci {

inline constexpr std::uint16_t kVendorNvidia = 0x10de;
inline constexpr std::uint16_t kVendorAmdGraphics = 0x1002;  // ATI heritage: GPUs
inline constexpr std::uint16_t kVendorAmd = 0x1022;          // CPUs, chipsets
inline constexpr std::uint16_t kVendorIntel = 0x8086;
inline constexpr std::uint16_t kVendorGraphcore = 0x1d95;
inline constexpr std::uint16_t kVendorHabana = 0x1da3;
inline constexpr std::uint16_t kVendorCray = 0x17db;      // HPE Slingshot (Cassini) NICs
inline constexpr std::uint16_t kVendorCornelis = 0x434e;  // Omni-Path
inline constexpr std::uint16_t kVendorMellanox = 0x15b3;
inline constexpr std::uint16_t kVendorAspeed = 0x1a03;
inline constexpr std::uint16_t kVendorMatrox = 0x102b;

inline constexpr std::uint16_t kClassVga = 0x0300;
inline constexpr std::uint16_t kClass3d = 0x0302;
inline constexpr std::uint16_t kClassDisplayOther = 0x0380;
inline constexpr std::uint16_t kClassProcessingAccelerator = 0x1200;
inline constexpr std::uint16_t kClassEthernet = 0x0200;
inline constexpr std::uint16_t kClassInfiniband = 0x0207;
inline constexpr std::uint16_t kClassSerialInfiniband = 0x0c06;  // pre-2.x InfiniBand cards

inline constexpr std::uint8_t baseClass(std::uint16_t class_id) {
  return static_cast<std::uint8_t>(class_id >> 8);
}

// Vendors whose VGA-class devices are compute GPUs (NVIDIA, AMD).
bool isGpuVendor(std::uint16_t vendor_id);

// Display adapters that never compute: BMC consoles (ASPEED, Matrox G200,
// Emulex Pilot, Huawei Hi171x) and hypervisor adapters (QEMU, virtio,
// VMware, Cirrus, Hyper-V).
bool isNonComputeDisplay(std::uint16_t vendor_id, std::uint16_t device_id);

// Whether the ids alone make a PCI function an accelerator: 3D or "other"
// display controllers and processing accelerators (0x1200) that are not
// non-compute displays, and VGA controllers of GPU vendors. OS devices of
// compute runtimes can make other functions accelerators too (classify).
bool isAcceleratorByIds(std::uint16_t class_id, std::uint16_t vendor_id, std::uint16_t device_id);

// Short vendor name ("NVIDIA", "AMD", "Graphcore", "Cray") or nullptr.
const char* vendorName(std::uint16_t vendor_id);

// vendorName(), or the id as "0x1e52" when the vendor is not in the table.
std::string vendorLabel(std::uint16_t vendor_id);

}  // namespace accel::topology::pci
