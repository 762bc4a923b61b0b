#pragma once
// accel-agentd: loads config and topology once, recovers persisted jobs,
// binds the control sockets, and only then reports READY=1. One epoll loop
// waits on a signalfd (TERM, INT, HUP), the status and heartbeat timers and,
// when systemd asked for it, a watchdog timerfd; when idle it never wakes up.
//
// The daemon owns its subsystems and starts them in the order they depend on
// each other (Daemon::start); each owns its threads and joins them when it
// stops:
//   event::Outbox       the event stream to the aggregator (its sender thread)
//   EventRelay          `accelctl events --job` relayed (its thread)
//   TrashRemover        job directories removed off the hooks' path (its thread)
//   agent::JobManager   the jobs and their steps (no thread of its own)
//   ApplianceService    appliance polling, time limits, surrogate steps (its threads)
//   NodeDrainer         node drains queued by prologs (its thread)
//   ControlServer       the control sockets (the worker pool)
//   metrics::HttpEndpoint  MetricsAddress (its thread)
//   NodeTelemetry       GPU sampling through NVML, when it loads (its thread)
//   IdleJobs            jobs whose GPUs all sit at 0%: told, cancelled (its thread)
//   KernelLogReader     GPU Xids from KernelLog, tied to jobs (its thread)
// and, once after start, the stale-job sweep (a thread joined at stop).
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "accel/agent/job_manager.h"
#include "accel/agent/kernel_log.h"
#include "accel/agentd/appliance_service.h"
#include "accel/agentd/control_handler.h"
#include "accel/agentd/control_server.h"
#include "accel/agentd/event_relay.h"
#include "accel/agentd/fabric_setup.h"
#include "accel/agentd/gpu_xids.h"
#include "accel/agentd/idle_jobs.h"
#include "accel/agentd/node_drain.h"
#include "accel/agentd/node_telemetry.h"
#include "accel/agentd/trash_remover.h"
#include "accel/agentd/vendors.h"
#include "accel/common/config.h"
#include "accel/common/metrics_http.h"
#include "accel/common/result.h"
#include "accel/events/outbox.h"

namespace accel::agentd {

struct DaemonOptions {
  std::string config_path;
  std::optional<std::string> topology_xml;  // overrides TopologyFile
  std::optional<std::string> hw_mock_dir;   // overrides HwMockDir
  // Makes the node's vendor clients from its configuration (setUpVendors in
  // accel-agentd's vendors.cpp, where the concrete drivers are linked);
  // unset: a node without vendor control planes.
  VendorSetUp set_up_vendors;
  // Makes the fabric step when accel.conf says Fabric=yes (makeFabricStep in
  // accel-agentd's fabric_setup.cpp, where the netlink adapter is linked);
  // unset: Fabric=yes is refused at start.
  FabricSetUp set_up_fabric;
  // Opens the GPU telemetry source from NvmlLibrary (openNvml in
  // accel-agentd's telemetry_setup.cpp, where the NVML adapter is linked);
  // unset: a node without telemetry ("no NVML adapter in this daemon").
  TelemetryOpen open_telemetry;
  // The NVML adapter's Xid parser and table (nvmlXidDecoder in accel-agentd's
  // telemetry_setup.cpp); unset: the kernel log is not read.
  XidDecoder decode_xid;
};

class Daemon {
 public:
  explicit Daemon(DaemonOptions options) : options_(std::move(options)) {}
  ~Daemon();

  // Everything up to READY=1. An error here means nothing started.
  Status start();
  // Serves until SIGTERM/SIGINT; returns the process exit code.
  int run();

 private:
  Result<agent::Inventory> loadInventory(const AccelConfig& config) const;
  Status loadConfig();
  Status startVendors();
  Status startJobManager();
  Status startEvents();
  Result<agent::RecoverySummary> recoverJobs();
  void makeHandlerContext();
  void announceStart(const agent::RecoverySummary& recovered);
  Status startControl();
  Status startLoop();
  void startStaleSweep();
  void markStatusDirty();
  void reload();
  void publishStatus();
  void armHeartbeat();
  void onHeartbeatTimer();
  void sendHeartbeat();
  void onStatusDirty();
  void armStatusTimer(std::chrono::nanoseconds after);
  void emitEvent(const event::Event& e);
  Status startTrash(const std::string& ipu_root);
  ApplianceService::Options applianceOptions() const;
  Status startMetrics();
  Status startEventRelay();
  void startTelemetry();
  void startIdleJobs(const std::string& self);  // daemon_idle.cpp
  void startXidWatch();
  void holdReserves();
  void noteReserves();

  DaemonOptions options_;
  AccelConfig config_;
  uid_t slurm_uid_ = 0;  // SlurmUser's
  sigset_t signals_{};   // TERM, INT, HUP: blocked in every thread, read from signal_fd_
  // HookTimeout for the request threads (config_ is the loop's): reloads change it.
  std::atomic<int64_t> hook_timeout_s_{0};
  // Shared with the vendor clients, which note their calls in it (a detached
  // cancel may outlive the daemon).
  std::shared_ptr<NodeHealth> health_ = std::make_shared<NodeHealth>();
  Vendors vendors_;
  // Drains this node for configuration faults found by prologs; outlives the
  // workers that queue them (destroyed after them, before health_).
  std::unique_ptr<NodeDrainer> drainer_;
  // Job directories moved aside by epilogs, removed by its thread; before
  // manager_, whose job-directory step hands them to it.
  std::unique_ptr<TrashRemover> trash_;
  std::unique_ptr<event::Outbox> outbox_;  // before manager_: outlives the workers' use
  // AggregatorQueryAddress: `accelctl events --job` relayed (workers hand it callers).
  std::unique_ptr<EventRelay> relay_;
  std::unique_ptr<agent::JobManager> manager_;
  // Appliance work and time limits; after manager_, stopped before it.
  std::unique_ptr<ApplianceService> appliance_;
  // Asks slurmctld about re-adopted jobs once after start (stale_jobs.h);
  // joined in the destructor, told to stop between jobs.
  std::thread stale_sweep_;
  std::atomic<bool> stale_sweep_stop_{false};
  // The handlers' job events (to outbox_) and everything else they reach.
  std::unique_ptr<JobEvents> handler_events_;
  HandlerContext ctx_;
  int epoll_fd_ = -1;
  int signal_fd_ = -1;
  int timer_fd_ = -1;  // watchdog pings, when systemd asked for them
  // STATUS= updates are coalesced: workers poke wake_fd_, the loop publishes
  // at most once a second. sd_notify can block when the manager reads its
  // socket slowly; it must never stall a prolog.
  int wake_fd_ = -1;
  int status_timer_fd_ = -1;
  int heartbeat_fd_ = -1;  // every HeartbeatInterval: a node_heartbeat event
  bool status_timer_armed_ = false;
  std::chrono::steady_clock::time_point last_status_{};
  // Set by a worker that changed something and woke the loop; cleared when
  // the loop publishes. While set, further changes need no wake-up.
  std::atomic<bool> status_dirty_{false};
  // The reserves' last release seen and whether each was held, by directory
  // (the loop's; space_reserves.cpp).
  std::map<std::string, int64_t> reserve_released_seen_;
  std::map<std::string, bool> reserve_held_;
  // MetricsAddress: the registry (the hooks' durations go here too).
  std::unique_ptr<AgentMetrics> metrics_ = std::make_unique<AgentMetrics>();
  // GPU telemetry (its sampling thread); before control_, whose workers use it.
  std::unique_ptr<NodeTelemetry> telemetry_;
  // Idle accelerators (IdleAfter): reads telemetry_, so declared after it
  // (stopped before it goes); its thread asks slurmctld in child processes.
  std::unique_ptr<IdleJobs> idle_;
  // GPU Xids (gpu_xids.h) and the kernel log's reader that feeds them (its
  // thread; declared after the monitor, so it stops first); after drainer_,
  // outbox_ and manager_, which the monitor reaches, and before control_.
  std::unique_ptr<XidMonitor> xids_;
  std::unique_ptr<agent::KernelLogReader> kernel_log_;
  // The control sockets and their workers; after everything a request
  // reaches, so that they are joined before any of it goes.
  std::unique_ptr<ControlServer> control_;
  // The metrics endpoint last of all members, so that it stops (and with it
  // every scrape reading manager_ and outbox_) before anything it reads goes.
  std::unique_ptr<metrics::HttpEndpoint> metrics_http_;
};

}  // namespace accel::agentd
