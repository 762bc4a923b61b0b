// The tasks per node the plugin exports for an IPU job (ACCEL_NTASKS), from
// the options as sbatch, salloc or srun hold them.
#include "accel/spank/task_count.h"

#include <gtest/gtest.h>

namespace accel::spank {
namespace {

constexpr std::nullopt_t kUnset = std::nullopt;

TEST(TasksPerNode, PerNodeCountWins) {
  EXPECT_EQ(tasksPerNode("6", "3", "2"), 3u);
  EXPECT_EQ(tasksPerNode(kUnset, "4", kUnset), 4u);
}

TEST(TasksPerNode, TasksSpreadOverTheFewestNodes) {
  EXPECT_EQ(tasksPerNode("4", kUnset, kUnset), 4u);
  EXPECT_EQ(tasksPerNode("4", kUnset, "2"), 2u);
  EXPECT_EQ(tasksPerNode("5", kUnset, "2"), 3u) << "rounded up";
  EXPECT_EQ(tasksPerNode("5", kUnset, "2-3"), 3u) << "a range: its smallest count";
  EXPECT_EQ(tasksPerNode("1", kUnset, "4"), 1u);
}

TEST(TasksPerNode, NothingGivenIsNotKnown) {
  EXPECT_EQ(tasksPerNode(kUnset, kUnset, kUnset), std::nullopt);
  EXPECT_EQ(tasksPerNode(kUnset, kUnset, "3"), std::nullopt) << "-N alone says nothing of tasks";
}

TEST(TasksPerNode, WhatIsNotACountIsNotKnown) {
  EXPECT_EQ(tasksPerNode("0", kUnset, kUnset), std::nullopt);
  EXPECT_EQ(tasksPerNode("-2", kUnset, kUnset), std::nullopt);
  EXPECT_EQ(tasksPerNode(kUnset, "-2", kUnset), std::nullopt) << "Slurm's 'not set' marker";
  EXPECT_EQ(tasksPerNode("abc", kUnset, kUnset), std::nullopt);
  EXPECT_EQ(tasksPerNode("4", kUnset, "x-3"), std::nullopt);
  EXPECT_EQ(tasksPerNode("99999999999999999999", kUnset, kUnset), std::nullopt);
  EXPECT_EQ(tasksPerNode("65537", kUnset, kUnset), std::nullopt);
  EXPECT_EQ(tasksPerNode("65536", kUnset, kUnset), 65536u);
}

}  // namespace
}  // namespace accel::spank
