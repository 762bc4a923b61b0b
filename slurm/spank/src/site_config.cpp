#include "accel/spank/site_config.h"

#include "accel/common/config_file.h"
#include "accel/common/vipu_config.h"

namespace accel::spank {

Result<ConfigPaths> locateConfig(const PluginArgs& args, const char* slurm_conf_env) {
  ConfigPaths paths;
  if (args.accel_conf) {
    paths.accel_conf = *args.accel_conf;
    paths.accel_conf_given = true;
  } else {
    auto found = defaultConfigPath(slurm_conf_env, kAccelConfName);
    ACCEL_TRY(found);
    paths.accel_conf = *found;
  }
  paths.vipu_conf =
      args.vipu_conf ? *args.vipu_conf : configPathBeside(paths.accel_conf, kVipuConfName);
  return paths;
}

Result<AccelConfig> readAccelConfig(const ConfigPaths& paths) {
  auto text = readConfigFile(paths.accel_conf);
  if (!text.ok()) {
    if (text.error().code() == ErrorCode::kNotFound && !paths.accel_conf_given)
      return parseAccelConfig("", paths.accel_conf);
    return text.error();
  }
  return parseAccelConfig(*text, paths.accel_conf);
}

Result<SiteLimits> readSiteLimits(const ConfigPaths& paths, bool want_ipus) {
  auto config = readAccelConfig(paths);
  ACCEL_TRY(config);
  SiteLimits limits;
  limits.accel_conf_path = paths.accel_conf;
  limits.appliance_time_max = config->appliance_time_max;
  limits.appliance_time_default = config->appliance_time_default;
  limits.vipu_conf_path = paths.vipu_conf;
  if (!want_ipus) return limits;
  auto text = readConfigFile(paths.vipu_conf);
  if (!text.ok()) {
    if (text.error().code() != ErrorCode::kNotFound) limits.vipu_problem = text.error().message();
    return limits;
  }
  auto vipu = parseVipuConfig(*text, paths.vipu_conf);
  if (!vipu.ok()) {
    // Several problems come one per line; a refusal is one line.
    std::string first = vipu.error().message();
    limits.vipu_problem = first.substr(0, first.find('\n'));
    return limits;
  }
  limits.max_ipus = vipu->max_ipus_per_job;
  return limits;
}

Result<std::string> controlSocketPath(const PluginArgs& args, const ConfigPaths& paths) {
  if (args.socket) return *args.socket;
  auto config = readAccelConfig(paths);
  ACCEL_TRY(config);
  return config->control_socket;
}

}  // namespace accel::spank
