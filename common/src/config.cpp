#include "accel/common/config.h"

#include "accel/common/config_errors.h"
#include "accel/common/config_keys.h"
#include "accel/common/vipu_config.h"

namespace accel {

std::string_view logLevelName(AccelConfig::LogLevel level) {
  const auto& choices = accelConfigSchema().find("LogLevel")->choices;
  auto index = static_cast<std::size_t>(level);
  ACCEL_CHECK(index < choices.size());
  return choices[index];
}

std::string adminSocketPath(const AccelConfig& config) {
  if (config.admin_socket) return *config.admin_socket;
  const std::string& p = config.control_socket;
  constexpr std::string_view kSock = ".sock";
  if (p.size() > kSock.size() && p.ends_with(kSock))
    return p.substr(0, p.size() - kSock.size()) + "-admin.sock";
  return p + "-admin";
}

Result<AccelConfig> parseAccelConfig(std::string_view text, std::string_view file_name) {
  return parseWithSchema<AccelConfig>(accelConfigSchema(), text, file_name);
}

Result<AccelConfig> loadAccelConfig(const std::string& path) {
  Result<std::string> text = readConfigFile(path);
  if (!text.ok()) return text.error();
  return parseAccelConfig(*text, path);
}

Status checkConfig(const std::string& accel_conf_path) {
  std::vector<Status> results;
  Result<AccelConfig> accel = loadAccelConfig(accel_conf_path);
  results.push_back(accel.ok() ? okStatus() : Status(accel.error()));

  std::string vipu_path = configPathBeside(accel_conf_path, kVipuConfName);
  Result<std::string> vipu_text = readConfigFile(vipu_path);
  if (vipu_text.ok()) {
    Result<VipuConfig> vipu = parseVipuConfig(*vipu_text, vipu_path);
    results.push_back(vipu.ok() ? okStatus() : Status(vipu.error()));
  } else if (vipu_text.error().code() != ErrorCode::kNotFound) {
    results.push_back(vipu_text.error());  // present but unreadable: worth saying
  }
  return joinStatuses(results);
}

}  // namespace accel
