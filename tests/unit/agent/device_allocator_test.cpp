#include "accel/agent/device_allocator.h"

#include <gtest/gtest.h>

namespace accel::agent {
namespace {

// Eight GPUs: 0-3 on socket 0 (0,1 share a PCI switch; 2,3 share another),
// 4-7 on socket 1 likewise. NIC beside GPUs 2,3 and 6,7.
AllocatorInput eightGpus() {
  AllocatorInput in;
  for (uint32_t i = 0; i < 8; ++i) in.devices.push_back({i, "gpu", i});
  in.device_distance = [](uint32_t a, uint32_t b) {
    if (a / 2 == b / 2) return 0;  // same switch
    if (a / 4 == b / 4) return 2;  // same socket
    return 4;
  };
  in.nic_distance = [](uint32_t a) { return (a % 4 >= 2) ? 0 : 2; };
  return in;
}

TEST(GpuListTest, ParsesSlurmForms) {
  EXPECT_EQ(*parseGpuList(""), std::vector<uint32_t>{});
  EXPECT_EQ(*parseGpuList("0,2"), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(*parseGpuList("1,4-6"), (std::vector<uint32_t>{1, 4, 5, 6}));
  for (auto bad : {"a", "1,", ",1", "3-1", "1--2", "-1", "99999"})
    EXPECT_FALSE(parseGpuList(bad).ok()) << bad;
}

TEST(AllocatorTest, SlurmChoiceIsHonouredAndConflictsRefused) {
  auto in = eightGpus();
  EXPECT_EQ(*pickGpus(in, {5, 1}), (std::vector<uint32_t>{5, 1}));
  in.held = {5};
  auto r = pickGpus(in, {5});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kConflict);
  EXPECT_EQ(pickGpus(in, {9}).error().code(), ErrorCode::kNotFound);
}

TEST(AllocatorTest, CountPicksTightClusterNearNic) {
  auto in = eightGpus();
  // Two devices: a switch pair, and of those the pair beside the NIC.
  EXPECT_EQ(*pickByCount(in, "gpu", 2), (std::vector<uint32_t>{2, 3}));
  // Four: one whole socket.
  auto four = *pickByCount(in, "gpu", 4);
  EXPECT_EQ(four, (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST(AllocatorTest, NeverHandsOutHeldDevices) {
  auto in = eightGpus();
  in.held = {2, 3, 6};
  auto two = *pickByCount(in, "gpu", 2);
  for (auto d : two) EXPECT_EQ(in.held.count(d), 0u);
  EXPECT_TRUE(two == (std::vector<uint32_t>{0, 1}) || two == (std::vector<uint32_t>{4, 5}));
  auto r = pickByCount(in, "gpu", 6);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("5 of 8 are free"), std::string::npos);
  EXPECT_FALSE(pickByCount(in, "ipu", 1).ok());
  EXPECT_TRUE(pickByCount(in, "ipu", 0)->empty());
}

}  // namespace
}  // namespace accel::agent
