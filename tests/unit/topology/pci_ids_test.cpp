#include "accel/topology/pci_ids.h"

#include <gtest/gtest.h>

namespace accel::topology::pci {
namespace {

TEST(TopologyPciIds, AcceleratorClasses) {
  EXPECT_TRUE(isAcceleratorByIds(0x0302, kVendorNvidia, 0x2330));       // H100
  EXPECT_TRUE(isAcceleratorByIds(0x0380, kVendorAmdGraphics, 0x7408));  // MI250X
  EXPECT_TRUE(isAcceleratorByIds(0x1200, kVendorGraphcore, 0x0002));    // IPU
  EXPECT_TRUE(isAcceleratorByIds(0x0300, kVendorNvidia, 0x2204));
  EXPECT_FALSE(isAcceleratorByIds(0x0300, kVendorAspeed, 0x2000));
  EXPECT_FALSE(isAcceleratorByIds(0x0300, kVendorMatrox, 0x0536));
  EXPECT_FALSE(isAcceleratorByIds(0x0380, 0x1af4, 0x1050));        // virtio-gpu
  EXPECT_FALSE(isAcceleratorByIds(0x0300, kVendorIntel, 0x56a0));  // needs a runtime device
  EXPECT_FALSE(isAcceleratorByIds(0x1201, kVendorIntel, 0x0b25));  // SDXI
  EXPECT_FALSE(isAcceleratorByIds(0x0b40, kVendorIntel, 0x4940));
  EXPECT_FALSE(isAcceleratorByIds(0x0200, kVendorMellanox, 0x1017));
}

TEST(TopologyPciIds, VendorNames) {
  EXPECT_STREQ(vendorName(kVendorNvidia), "NVIDIA");
  EXPECT_STREQ(vendorName(kVendorAmdGraphics), "AMD");
  EXPECT_STREQ(vendorName(0x1d95), "Graphcore");
  EXPECT_EQ(vendorName(0x1e26), nullptr);  // Fujitsu Client Computing, not Graphcore
  EXPECT_EQ(vendorLabel(0x1e52), "0x1e52");
  EXPECT_EQ(vendorLabel(kVendorCray), "Cray");
}

}  // namespace
}  // namespace accel::topology::pci
