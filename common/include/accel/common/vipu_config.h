#pragma once
// vipu.conf: the V-IPU options file that Graphcore's Slurm integration keeps
// beside slurm.conf. The agent reads it unchanged, with the same keys and
// defaults (ApiHost, ApiPort, IpuofDir, MaxIpusPerJob, ApiTimeout, IsSecure,
// and the mTLS keys), so one file serves both. The key table is in
// config_keys.cpp.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "accel/common/result.h"

namespace accel {

inline constexpr std::string_view kVipuConfName = "vipu.conf";

// A successful parse fills every field; the optional ones are set only when
// the file sets them. With is_secure, the five TLS fields are all set (the
// parser requires them). Initial values are placeholders, as in AccelConfig.
struct VipuConfig {
  std::string api_host;
  std::uint16_t api_port = 0;
  std::string ipuof_dir;
  std::uint32_t max_ipus_per_job = 0;
  std::chrono::seconds api_timeout{0};
  bool is_secure = false;
  std::optional<std::string> api_user;
  std::optional<std::string> api_access_key;  // a secret: never log it
  std::optional<std::string> client_cert_file;
  std::optional<std::string> client_key_file;
  std::optional<std::string> server_cert_file;
};

// Parses the text of a vipu.conf; errors as for parseAccelConfig. ApiHost and
// IpuofDir are required, so empty text is an error.
Result<VipuConfig> parseVipuConfig(std::string_view text,
                                   std::string_view file_name = kVipuConfName);

// Reads and parses the file at `path`; messages name the file by `path`.
Result<VipuConfig> loadVipuConfig(const std::string& path);

}  // namespace accel
