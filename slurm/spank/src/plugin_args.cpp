#include "accel/spank/plugin_args.h"

#include <array>

#include "accel/common/config_errors.h"
#include "accel/spank/option_values.h"

namespace accel::spank {
namespace {

enum class Key { kAccelConf, kVipuConf, kSocket, kTimeout };

struct KeySpec {
  std::string_view name;
  Key key;
};

constexpr std::array<KeySpec, 4> kKeys{{
    {"accel_conf", Key::kAccelConf},
    {"vipu_conf", Key::kVipuConf},
    {"socket", Key::kSocket},
    {"timeout", Key::kTimeout},
}};

Error bad(std::string_view arg, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument,
               "plugstack.conf argument " + quoteForMessage(arg) + ": " + why);
}

Status setPath(std::string_view arg, std::string_view value, std::optional<std::string>* out) {
  if (value.front() != '/') return bad(arg, "needs an absolute path");
  *out = std::string(value);
  return okStatus();
}

Status setTimeout(std::string_view arg, std::string_view value, std::chrono::seconds* out) {
  ParsedNumber n = parseWholeNumber(value, static_cast<std::uint64_t>(kMaxDaemonTimeout.count()));
  if (n.problem != NumberProblem::kNone || n.value == 0)
    return bad(arg, "needs whole seconds from 1 to " + std::to_string(kMaxDaemonTimeout.count()));
  *out = std::chrono::seconds(static_cast<std::int64_t>(n.value));
  return okStatus();
}

}  // namespace

std::string_view pluginArgsUsage() {
  return "accel_conf=PATH, vipu_conf=PATH, socket=PATH, timeout=SECONDS";
}

Result<PluginArgs> parsePluginArgs(const std::vector<std::string_view>& args) {
  PluginArgs out;
  std::array<bool, kKeys.size()> seen{};
  for (std::string_view arg : args) {
    std::size_t eq = arg.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return bad(arg, "expected KEY=VALUE; keys: " + std::string(pluginArgsUsage()));
    std::string_view name = arg.substr(0, eq);
    std::string_view value = arg.substr(eq + 1);
    std::size_t i = 0;
    while (i < kKeys.size() && kKeys[i].name != name) ++i;
    if (i == kKeys.size())
      return bad(arg, "unknown key " + quoteForMessage(name) +
                          "; keys: " + std::string(pluginArgsUsage()));
    if (seen[i]) return bad(arg, "key " + quoteForMessage(name) + " given twice");
    seen[i] = true;
    if (value.empty()) return bad(arg, "empty value");
    switch (kKeys[i].key) {
      case Key::kAccelConf:
        ACCEL_TRY(setPath(arg, value, &out.accel_conf));
        break;
      case Key::kVipuConf:
        ACCEL_TRY(setPath(arg, value, &out.vipu_conf));
        break;
      case Key::kSocket:
        ACCEL_TRY(setPath(arg, value, &out.socket));
        break;
      case Key::kTimeout:
        ACCEL_TRY(setTimeout(arg, value, &out.timeout));
        break;
    }
  }
  return out;
}

}  // namespace accel::spank
