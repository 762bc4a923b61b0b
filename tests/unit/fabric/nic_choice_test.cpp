// NIC choice on topologies captured from real machines (tests/hw_mock). The
// expected NICs were read from the fixtures' placements, listed in
// tests/hw_mock/README.md and by `accel-agentd --print-topology --xml FILE`.
#include "accel/fabric/nic_choice.h"

#include <gtest/gtest.h>

#include "accel/topology/loader.h"

namespace accel::fabric {
namespace {

using Names = std::vector<std::string>;
using topology::Distance;

topology::NodeTopology fixture(const std::string& name) {
  topology::LoadOptions options;
  options.xml_path = std::string(ACCEL_HW_MOCK_DIR) + "/topologies/" + name;
  auto topology = topology::loadTopology(options);
  EXPECT_TRUE(topology.ok()) << topology.error().message();
  return topology.ok() ? *topology : topology::NodeTopology{};
}

Names choose(const topology::NodeTopology& t, std::vector<unsigned> accels, Names configured = {},
             Names avoid = {}) {
  auto chosen = chooseFabricNics(t, accels, configured, avoid);
  EXPECT_TRUE(chosen.ok()) << chosen.error().message();
  return chosen.ok() ? nicNames(*chosen) : Names{"<error>"};
}

// ipa20: GPU0 shares a switch with both ports of one ConnectX (hsi0,
// ibs2f1), GPU1 with ibp94s0, GPU3 with ibp218s0; GPU2 has none, and
// ibp218s0 is the only NIC on its package.
TEST(FabricNicChoice, Ipa20NearestPerGpu) {
  auto t = fixture("ipa20.xml");
  ASSERT_EQ(t.accelerators.size(), 4u);
  ASSERT_EQ(t.nics.size(), 6u);
  EXPECT_EQ(choose(t, {0}), (Names{"hsi0", "ibs2f1"}));
  EXPECT_EQ(choose(t, {1}), (Names{"ibp94s0"}));
  EXPECT_EQ(choose(t, {3}), (Names{"ibp218s0"}));
  auto far = chooseFabricNics(t, {2}, {}, {});
  ASSERT_TRUE(far.ok());
  ASSERT_EQ(far->size(), 1u);
  EXPECT_EQ((*far)[0].netdev, "ibp218s0");
  EXPECT_EQ((*far)[0].distance, Distance::kSamePackage);
  // The whole node, in NIC order, whatever order the job lists its GPUs in.
  EXPECT_EQ(choose(t, {3, 2, 1, 0}), (Names{"hsi0", "ibs2f1", "ibp94s0", "ibp218s0"}));
  EXPECT_EQ(choose(t, {0, 1, 2, 3}), choose(t, {3, 2, 1, 0}));
  // GPU2 and GPU3 share ibp218s0; the nearer distance is reported.
  auto shared = chooseFabricNics(t, {2, 3}, {}, {});
  ASSERT_TRUE(shared.ok());
  ASSERT_EQ(shared->size(), 1u);
  EXPECT_EQ((*shared)[0].distance, Distance::kSamePciSwitch);
}

TEST(FabricNicChoice, ManagementInterfaceIsNeverChosen) {
  auto t = fixture("ipa20.xml");
  EXPECT_EQ(choose(t, {0}, {}, {"hsi0"}), (Names{"ibs2f1"}));
  // conan: GPU0 sits on NUMA 0 and every NIC on NUMA 1, so all tie as far.
  auto conan = fixture("32em64t-2n8c2t-pci-wholeio.xml");
  EXPECT_EQ(choose(conan, {0}), (Names{"ib0", "eth0", "eth1"}));
  EXPECT_EQ(choose(conan, {0}, {}, {"eth0"}), (Names{"ib0", "eth1"}));
  EXPECT_EQ(choose(conan, {2}, {}, {"eth0"}), (Names{"ib0"}));
  auto refused = chooseFabricNics(conan, {2}, {"ib0", "eth0"}, {"eth0"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message(),
            "fabric: eth0 is configured as a fabric interface but is the management interface");
}

TEST(FabricNicChoice, ConfiguredInterfacesAreTheOnlyCandidates) {
  auto t = fixture("ipa20.xml");
  // GPU0 (package 0): ibp94s0 is on its package, ibp218s0 on the other one.
  EXPECT_EQ(choose(t, {0}, {"ibp218s0", "ibp94s0"}), (Names{"ibp94s0"}));
  // A name hwloc did not report has unknown locality: only chosen when
  // nothing known is nearer, and listed after the topology's NICs.
  EXPECT_EQ(choose(t, {0}, {"roce9", "hsi0"}), (Names{"hsi0"}));
  EXPECT_EQ(choose(t, {0}, {"roce9"}), (Names{"roce9"}));
}

TEST(FabricNicChoice, JobsWithoutLocalAcceleratorsGetTheConfiguredInterfaces) {
  auto t = fixture("ipa20.xml");
  EXPECT_EQ(choose(t, {}, {"roce9", "ibp94s0", "hsi0", "roce9"}),
            (Names{"hsi0", "ibp94s0", "roce9"}));
  EXPECT_TRUE(choose(t, {}).empty());
}

TEST(FabricNicChoice, MachineWideLocality) {
  // tioga: every GPU and Slingshot NIC is attached to the whole machine;
  // GPU1 shares a host bridge with hsi0, GPU0 shares nothing provable, so
  // every NIC ties at "same package".
  auto t = fixture("hpe-tioga.xml");
  EXPECT_EQ(choose(t, {1}), (Names{"hsi0"}));
  EXPECT_EQ(choose(t, {0}, {}, {"ens2"}), (Names{"hsi0", "hsi1", "hsi2", "hsi3"}));
  EXPECT_EQ(choose(t, {1, 7}, {}, {"ens2"}), (Names{"hsi0", "hsi3"}));
}

TEST(FabricNicChoice, OneNicPerApu) {
  auto t = fixture("elcap.xml");
  EXPECT_EQ(choose(t, {0}), (Names{"hsi0"}));
  EXPECT_EQ(choose(t, {3, 0}), (Names{"hsi0", "hsi3"}));
}

TEST(FabricNicChoice, NodesWithoutNicsAndBadIndexes) {
  auto power8 = fixture("power8gpudistances.xml");
  EXPECT_TRUE(choose(power8, {0, 1, 2, 3}).empty());
  auto t = fixture("ipa20.xml");
  auto bad = chooseFabricNics(t, {4}, {}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message(), "fabric: accelerator 4 is not on this node (4 accelerators)");
}

}  // namespace
}  // namespace accel::fabric
