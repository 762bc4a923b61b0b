// What the tasks see of their fabric.
#include <gtest/gtest.h>

#include "accel/fabric/manager.h"

namespace accel::fabric {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

TEST(FabricEnvironment, NamesNicsAddressesPrefixAndMtu) {
  JobFabric fabric{42,
                   {{"hsi0", *parseCidr("10.9.0.43/24")}, {"ibs2f1", *parseCidr("10.9.0.44/24")}},
                   9000,
                   {*parseCidr("10.10.0.0/16")}};
  EXPECT_EQ(fabricEnvironment(fabric), (Env{{"ACCEL_FABRIC_NICS", "hsi0,ibs2f1"},
                                            {"ACCEL_FABRIC_ADDRESSES", "10.9.0.43,10.9.0.44"},
                                            {"ACCEL_FABRIC_PREFIX", "24"},
                                            {"ACCEL_FABRIC_MTU", "9000"}}));
}

TEST(FabricEnvironment, OnlyWhatIsSet) {
  EXPECT_TRUE(fabricEnvironment(JobFabric{7, {}, 9000, {}}).empty());
  EXPECT_EQ(fabricEnvironment(JobFabric{7, {{"eth3", std::nullopt}}, std::nullopt, {}}),
            (Env{{"ACCEL_FABRIC_NICS", "eth3"}}));
}

}  // namespace
}  // namespace accel::fabric
