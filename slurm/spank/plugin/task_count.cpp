// The task count at submission. SPANK gives a plugin in sbatch, salloc or
// srun no item for it (S_JOB_TOTAL_TASK_COUNT exists only in slurmstepd), and
// these commands export SLURM_NTASKS only after the plugins have run. Yet
// the Prolog needs it (one GCD per task), and asking slurmctld from there
// costs the hook a round trip it may not have time for. So the plugin reads
// the command's own options: each of the three holds them in a global
// `slurm_opt_t opt`, which Slurm's option code prints with
// slurm_option_get() and tests with slurm_option_isset(). Both are looked up
// by name at run time, so a Slurm without them only loses the count: the
// Prolog then takes one task per node, as it does for a job submitted
// without the plugin.
#include "task_count.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "accel/spank/task_count.h"
#include "plugin_state.h"

namespace accel::spank::submit {
namespace {

using GetFn = char* (*)(void* opt, const char* name);
using IsSetFn = bool (*)(void* opt, const char* name);

// Slurm 20.02 brought the option table (slurm_opt.c) that all three commands
// share; checked on 22.05. Other versions are not trusted with the guess.
bool knownVersion(spank_t sp) {
  const char* major = nullptr;
  if (spank_get_item(sp, S_SLURM_VERSION_MAJOR, &major) != ESPANK_SUCCESS || major == nullptr)
    return false;
  int m = std::atoi(major);
  return m >= 20 && m <= 24;
}

}  // namespace

std::optional<std::uint32_t> tasksPerNodeAsGiven(spank_t sp) {
  if (!knownVersion(sp)) return std::nullopt;
  void* opt = dlsym(RTLD_DEFAULT, "opt");
  auto get = reinterpret_cast<GetFn>(dlsym(RTLD_DEFAULT, "slurm_option_get"));
  auto is_set = reinterpret_cast<IsSetFn>(dlsym(RTLD_DEFAULT, "slurm_option_isset"));
  if (opt == nullptr || get == nullptr || is_set == nullptr) {
    reportDebug("the task count is not known at submission; the Prolog takes one task per node");
    return std::nullopt;
  }
  // The strings are Slurm's (xmalloc); a submit command lives briefly, so
  // the few bytes are left to its exit rather than to a free we would have
  // to look up too.
  auto value = [&](const char* name) -> std::optional<std::string> {
    if (!is_set(opt, name)) return std::nullopt;
    const char* v = get(opt, name);
    return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
  };
  auto ntasks = value("ntasks");
  auto per_node = value("ntasks-per-node");
  auto nodes = value("nodes");
  auto view = [](const std::optional<std::string>& s) {
    return s ? std::optional<std::string_view>(*s) : std::nullopt;
  };
  return tasksPerNode(view(ntasks), view(per_node), view(nodes));
}

}  // namespace accel::spank::submit
