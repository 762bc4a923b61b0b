#pragma once
// The arguments of the plugin's line in plugstack.conf:
//
//   required /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_accel.so [KEY=VALUE ...]
//
//   accel_conf=PATH   accel.conf to read (default: beside slurm.conf)
//   vipu_conf=PATH    vipu.conf to read (default: beside accel.conf)
//   socket=PATH       accel-agentd's control socket (default: ControlSocket of accel.conf)
//   timeout=SECONDS   bound on one call to accel-agentd, 1 to 300 (default 5)
//
// Parsing is strict: an unknown key, a key given twice, a missing '=' or an
// empty value is an error, so a typo cannot silently fall back to a default.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/result.h"

namespace accel::spank {

inline constexpr std::chrono::seconds kDefaultDaemonTimeout{5};
inline constexpr std::chrono::seconds kMaxDaemonTimeout{300};

struct PluginArgs {
  std::optional<std::string> accel_conf;
  std::optional<std::string> vipu_conf;
  std::optional<std::string> socket;
  std::chrono::seconds timeout = kDefaultDaemonTimeout;
};

// The keys and what they take, for messages and documentation.
std::string_view pluginArgsUsage();

// Errors are kInvalidArgument and name the offending argument.
Result<PluginArgs> parsePluginArgs(const std::vector<std::string_view>& args);

}  // namespace accel::spank
