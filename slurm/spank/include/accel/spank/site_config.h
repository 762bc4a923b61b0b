#pragma once
// Where the plugin finds accel.conf and vipu.conf, and what it takes from
// them: submit-time limits (sbatch, salloc, srun) and the control socket
// (slurmstepd). Search order for accel.conf: the accel_conf= argument of
// plugstack.conf, else beside slurm.conf (directory of SLURM_CONF, else
// /etc/slurm). vipu.conf: the vipu_conf= argument, else beside accel.conf.
#include <string>

#include "accel/common/config.h"
#include "accel/common/result.h"
#include "accel/spank/plugin_args.h"
#include "accel/spank/submit_check.h"

namespace accel::spank {

struct ConfigPaths {
  std::string accel_conf;
  bool accel_conf_given = false;  // named in plugstack.conf: it must exist
  std::string vipu_conf;
};

// `slurm_conf_env` is the value of SLURM_CONF (nullptr: unset).
Result<ConfigPaths> locateConfig(const PluginArgs& args, const char* slurm_conf_env);

// accel.conf as parsed. A missing file gives the defaults (login nodes need
// not carry one) unless plugstack.conf named it; then it is kNotFound.
Result<AccelConfig> readAccelConfig(const ConfigPaths& paths);

// The limits checkOptions() needs. vipu.conf is read only when `want_ipus`
// (a job that asks for no IPUs must not fail over a broken vipu.conf); a
// missing one leaves max_ipus unset, an unreadable or invalid one sets
// vipu_problem. Errors come from accel.conf only.
Result<SiteLimits> readSiteLimits(const ConfigPaths& paths, bool want_ipus);

// The daemon's socket: socket= of plugstack.conf, else ControlSocket of accel.conf.
Result<std::string> controlSocketPath(const PluginArgs& args, const ConfigPaths& paths);

}  // namespace accel::spank
