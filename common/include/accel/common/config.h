#pragma once
// accel.conf: the agent's own settings, in slurm.conf's Key=Value syntax.
// Every key (name, type, default, limits, help) is declared once, in the
// table in config_keys.cpp; docs/config-reference.md is generated from it.
//
// Typical use by an entry point:
//   auto path = defaultConfigPath(getenv("SLURM_CONF"), kAccelConfName);  // or --config
//   auto config = loadAccelConfig(*path);
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "accel/common/config_file.h"
#include "accel/common/result.h"
#include "accel/common/slurm_time.h"

namespace accel {

inline constexpr std::string_view kAccelConfName = "accel.conf";

// The settings of accel.conf. A successful parse fills every field: from the
// file, else from the table's default. std::optional marks keys that have no
// default (unset means "feature off"). The initial values below are mere
// placeholders; the defaults live in the table only.
struct AccelConfig {
  // In the order of the LogLevel key's choices in the table.
  enum class LogLevel { kError, kWarning, kInfo, kDebug };
  // In the order of the ApplianceTimeOnRequeue key's choices.
  enum class RequeueBudget { kFresh, kCumulative };
  // In the order of the IdleAction key's choices.
  enum class IdleAction { kNone, kNotify, kCancel };

  std::string control_socket;
  std::optional<std::string> admin_socket;  // unset: adminSocketPath() derives it
  std::uint64_t control_user_connections = 0;
  std::uint64_t control_user_requests = 0;
  std::uint64_t control_user_rate = 0;
  std::uint64_t control_user_idle_ms = 0;
  std::string state_dir;
  std::string run_dir;
  std::uint64_t job_dir_size = 0;    // bytes of each job's own tmpfs; 0: no file system of its own
  std::uint64_t job_dir_inodes = 0;  // inodes of each job's own tmpfs
  std::uint64_t reserve_space = 0;   // bytes held back on each file system of the records
  std::string slurm_user;
  LogLevel log_level = LogLevel::kInfo;
  std::optional<std::string> topology_file;
  std::chrono::seconds hook_timeout{0};
  std::optional<std::string> hw_mock_dir;
  std::string vendor_environment;  // comma-separated variable names
  std::optional<SlurmDuration> appliance_time_default;
  SlurmDuration appliance_time_max;
  std::string vipu_command;
  std::optional<std::string> appliance_command;
  std::chrono::seconds appliance_poll_interval{0};
  std::chrono::seconds appliance_timeout{0};
  bool fabric = false;
  std::string fabric_interfaces;  // comma-separated
  std::string fabric_management_interface;
  std::uint64_t fabric_mtu = 0;
  std::string fabric_address_range;
  std::uint64_t fabric_address_prefix = 0;
  std::string fabric_routes;  // comma-separated
  std::string fabric_netns;   // empty: the daemon's own namespace
  // Event stream to accel-aggregatord (ipc/events/outbox.h).
  std::optional<std::string> aggregator_address;
  std::optional<std::string>
      aggregator_query_address;                // events questions (event_relay.h); unset: none
  std::optional<std::string> metrics_address;  // HOST:PORT of the /metrics endpoint; unset: none
  std::chrono::seconds telemetry_interval{0};  // GPU sampling period (agent/telemetry/)
  std::string nvml_library;                    // what dlopen loads for NVML
  SlurmDuration idle_after;                    // jobs' GPUs all at 0% this long; 0: off
  IdleAction idle_action = IdleAction::kNone;  // what then, beyond the event and the line
  std::string kernel_log;  // where GPU Xid reports are read (/dev/kmsg; agentd's gpu_xids.h)
  std::string aggregator_public_key_file;
  std::string node_key_file;
  std::uint32_t aggregator_reconnect_min_ms = 0;  // the link's back-off (reconnect_backoff.h)
  std::uint32_t aggregator_reconnect_max_ms = 0;
  std::chrono::seconds aggregator_ping_interval{0};  // ZMTP heartbeats; 0: none
  std::chrono::seconds aggregator_ping_timeout{0};
  std::chrono::seconds aggregator_tcp_keepalive{0};  // idle time before probes; 0: none
  std::optional<std::string> event_spool_dir;
  std::uint64_t event_spool_max_size = 0;
  std::chrono::seconds heartbeat_interval{0};    // 0: no heartbeats
  std::chrono::seconds appliance_kill_grace{0};  // SIGTERM to SIGKILL at the appliance limit
  bool surrogate_steps = true;                   // appliance jobs mirrored as Slurm steps
  RequeueBudget requeue_budget = RequeueBudget::kFresh;  // a requeued job's next run
};

// "error", "warning", "info" or "debug".
std::string_view logLevelName(AccelConfig::LogLevel level);

// AdminSocket, or when unset ControlSocket's path with "-admin" before its
// ".sock" (/run/accel-agent/control.sock: /run/accel-agent/control-admin.sock),
// or appended when it has no ".sock".
std::string adminSocketPath(const AccelConfig& config);

// Parses the text of an accel.conf. `file_name` names it in messages
// ("accel.conf:12: key 'HookTimeout': ..."). Returns a complete config or
// every error found (kInvalidArgument, one message per line). Empty text
// gives the defaults.
Result<AccelConfig> parseAccelConfig(std::string_view text,
                                     std::string_view file_name = kAccelConfName);

// Reads and parses the file at `path`; messages name the file by `path`.
Result<AccelConfig> loadAccelConfig(const std::string& path);

// For `accelctl config check [FILE]`: checks the accel.conf at
// `accel_conf_path` and, when a vipu.conf exists in the same directory, that
// one too. Success, or the errors of both files joined by '\n'. A missing
// accel.conf is an error (it was asked for); a missing vipu.conf is not.
Status checkConfig(const std::string& accel_conf_path);

}  // namespace accel
