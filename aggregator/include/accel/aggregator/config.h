#pragma once
// accel-aggregator.conf: settings of accel-aggregatord, in slurm.conf's
// Key=Value syntax, with its own key table (config.cpp). Unknown keys are
// errors naming file, line and key, as for accel.conf.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "accel/common/config_schema.h"
#include "accel/common/result.h"

namespace accel::aggregator {

inline constexpr std::string_view kAggregatorConfName = "accel-aggregator.conf";

struct AggregatorConfig {
  enum class LogLevel { kError, kWarning, kInfo, kDebug };  // order of the LogLevel choices
  std::string listen;
  std::string secret_key_file;
  std::string allow_list_dir;
  std::string database;
  std::optional<std::string> metrics_address;
  std::optional<std::string> query_address;  // events questions from the nodes; unset: none
  uint32_t comment_writes_per_second = 0;
  uint32_t comment_batch_size = 0;
  uint32_t comment_connections = 0;
  bool write_comments = true;
  std::chrono::seconds summary_wait{0};
  std::optional<std::string> cluster_name;
  std::optional<std::string> slurm_conf;
  uint64_t max_frame_bytes = 0;
  uint32_t batch_size = 0;
  uint32_t batch_wait_ms = 0;
  std::chrono::seconds ping_interval{0};  // ZMTP heartbeats to every node; 0: none
  std::chrono::seconds ping_timeout{0};
  std::chrono::seconds tcp_keepalive{0};  // 0: the system's default
  // Before authentication (server.h): the handshake's deadline, the node
  // socket's I/O threads, the bound per source address (0: none).
  std::chrono::seconds handshake_timeout{0};
  uint32_t io_threads = 0;
  uint32_t connections_per_address = 0;
  enum class Synchronous { kFull, kNormal };  // order of the Synchronous choices
  Synchronous synchronous = Synchronous::kFull;
  LogLevel log_level = LogLevel::kInfo;
};

const ConfigSchema& aggregatorConfigSchema();
Result<AggregatorConfig> parseAggregatorConfig(std::string_view text,
                                               std::string_view file_name = kAggregatorConfName);
Result<AggregatorConfig> loadAggregatorConfig(const std::string& path);

}  // namespace accel::aggregator
