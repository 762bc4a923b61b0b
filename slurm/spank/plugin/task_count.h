#pragma once
#include <cstdint>
#include <optional>

#include "slurm_spank.h"

namespace accel::spank::submit {

// The job's tasks on each node as given to this sbatch, salloc or srun, or
// nullopt when the command does not say (see task_count.cpp).
std::optional<std::uint32_t> tasksPerNodeAsGiven(spank_t sp);

}  // namespace accel::spank::submit
