#pragma once
// The job's tasks on each node, as the plugin learns them at submission and
// exports to the Prolog (ACCEL_NTASKS): an IPU job gets one GCD per task.
// Pure arithmetic on the options sbatch, salloc or srun were given; the glue
// that reads them from the command lives in plugin/task_count.cpp.
#include <cstdint>
#include <optional>
#include <string_view>

namespace accel::spank {

// The values of the command's options --ntasks, --ntasks-per-node and
// --nodes as Slurm prints them ("4", "2-3" for a node range), nullopt for an
// option not given. The tasks on one node: --ntasks-per-node when given, else
// --ntasks spread evenly over the fewest nodes asked for (rounded up), as
// slurmctld places them. nullopt when neither count was given or a value is
// not a count of 1 to kMaxTasksOnNode: the Prolog then takes one task.
std::optional<std::uint32_t> tasksPerNode(std::optional<std::string_view> ntasks,
                                          std::optional<std::string_view> ntasks_per_node,
                                          std::optional<std::string_view> nodes);

}  // namespace accel::spank
