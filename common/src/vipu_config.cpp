#include "accel/common/vipu_config.h"

#include "accel/common/config_file.h"
#include "accel/common/config_keys.h"

namespace accel {

Result<VipuConfig> parseVipuConfig(std::string_view text, std::string_view file_name) {
  return parseWithSchema<VipuConfig>(vipuConfigSchema(), text, file_name);
}

Result<VipuConfig> loadVipuConfig(const std::string& path) {
  Result<std::string> text = readConfigFile(path);
  if (!text.ok()) return text.error();
  return parseVipuConfig(*text, path);
}

}  // namespace accel
