#pragma once
// What one process that loaded the plugin (sbatch, salloc, srun or one
// slurmstepd) knows between SPANK callbacks. Slurm calls the plugin from one
// thread, and slurmstepd forks its tasks from the process that ran the
// earlier callbacks, so plain process-wide state is enough and is inherited
// by each task.
#include <optional>
#include <string>

#include "accel/spank/plugin_args.h"
#include "accel/spank/submit_check.h"
#include "slurm_spank.h"

namespace accel::spank {

struct PluginState {
  PluginArgs args;
  // Why the plugstack.conf arguments were refused; set once by init.
  std::optional<std::string> args_error;
  // The options as the user typed them, filled by Slurm through optionSeen.
  RawOptions raw;
};

PluginState& state();

// Parses the plugstack.conf arguments into state(); false (and args_error set)
// when they are invalid.
bool parseArgs(int argc, char** argv);

// Registers every option of the plugin. Must run in slurm_spank_init of every
// context that sees options (srun, sbatch, salloc, slurmstepd): sbatch and
// salloc know only registered options, and slurmstepd matches the options
// forwarded to it against the registered ones.
int registerOptions(spank_t sp);

// Logs one user-facing line with the component prefix: "accel: ...".
void reportError(const std::string& message);
// For the node's log only (shown by slurmd/slurmstepd at debug level).
void reportDebug(const std::string& message);

}  // namespace accel::spank
