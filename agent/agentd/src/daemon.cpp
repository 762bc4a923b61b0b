#include "accel/agentd/daemon.h"

#include <pwd.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "accel/agent/appliance_watcher.h"
#include "accel/agent/env_file_step.h"
#include "accel/agent/ipu_partition_step.h"
#include "accel/agent/job_dir_step.h"
#include "accel/agentd/earlier_runs.h"
#include "accel/agentd/fabric_setup.h"
#include "accel/agentd/inventory_builder.h"
#include "accel/agentd/job_clock.h"
#include "accel/agentd/job_events.h"
#include "accel/agentd/outbox_options.h"
#include "accel/agentd/slurm_jobs.h"
#include "accel/agentd/stale_jobs.h"
#include "accel/agentd/task_signals.h"
#include "accel/agentd/trash_remover.h"
#include "accel/common/clock.h"
#include "accel/common/config_file.h"
#include "accel/common/log.h"
#include "accel/common/notify.h"
#include "accel/common/safe_file.h"
#include "accel/common/vipu_config.h"
#include "accel/events/outbox.h"
#include "accel/schemas/control_generated.h"
#include "accel/topology/loader.h"

namespace accel::agentd {
namespace {

using namespace std::chrono_literals;

std::string shortHostname() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  std::string h = u.nodename;
  return h.substr(0, h.find('.'));
}

Result<uid_t> uidOf(const std::string& user) {
  passwd pw{};
  passwd* out = nullptr;
  std::vector<char> buf(16384);
  if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &out) != 0 || out == nullptr)
    return Error(ErrorCode::kNotFound, "SlurmUser '" + user + "' is not a known user");
  return out->pw_uid;
}

// The socket's per-user limits from accel.conf; the admins' and all users'
// places are fixed (AdmissionLimits' defaults).
ipc::AdmissionLimits admissionLimits(const AccelConfig& c) {
  ipc::AdmissionLimits l;
  l.user_connections = static_cast<int>(c.control_user_connections);
  l.user_requests = static_cast<int>(c.control_user_requests);
  l.user_rate = static_cast<double>(c.control_user_rate);
  l.user_burst = 2 * l.user_rate;
  l.user_idle = std::chrono::milliseconds(c.control_user_idle_ms);
  return l;
}

std::string selfPath() {
  std::vector<char> buf(4096);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<size_t>(n)) : "accel-agentd";
}

log::Level levelOf(AccelConfig::LogLevel l) {
  switch (l) {
    case AccelConfig::LogLevel::kError:
      return log::Level::kError;
    case AccelConfig::LogLevel::kWarning:
      return log::Level::kWarning;
    case AccelConfig::LogLevel::kInfo:
      return log::Level::kInfo;
    case AccelConfig::LogLevel::kDebug:
      return log::Level::kDebug;
  }
  return log::Level::kInfo;
}

Status addToEpoll(int epfd, int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) return sysError("epoll_ctl", errno);
  return okStatus();
}

}  // namespace

Result<agent::Inventory> Daemon::loadInventory(const AccelConfig& config) const {
  std::string xml = options_.topology_xml.value_or(
      config.topology_file.value_or(vendors_.topology_xml.value_or("")));
  auto inv = agentd::loadInventory(xml);
  if (!inv.ok()) return inv.error().context("topology");
  return inv;
}

Daemon::~Daemon() {
  // Stopped in the order they call each other: the watcher (it feeds the
  // manager, the limits and the surrogate steps), then the limits (their
  // reporter may still emit and cancel), then the surrogate steps. reset()
  // leaves each pointer null, which the later ones test. The stale-job sweep
  // calls the handler, which uses all of them: it ends first.
  metrics_http_.reset();           // no scrape reads what goes below
  if (control_) control_->stop();  // no request reaches what goes below
  stale_sweep_stop_ = true;
  if (stale_sweep_.joinable()) stale_sweep_.join();
  if (appliance_) appliance_->stop();
  for (int fd : {epoll_fd_, signal_fd_, timer_fd_, wake_fd_, status_timer_fd_, heartbeat_fd_})
    if (fd >= 0) close(fd);
}

// Each step below owns its part; the order is the order of dependence.
Status Daemon::start() {
  // Blocked before any thread starts (the outbox's sender, workers), so that
  // every thread inherits the mask and only the signalfd sees these.
  sigemptyset(&signals_);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals_, s);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  signal(SIGPIPE, SIG_IGN);

  ACCEL_TRY(loadConfig());       // accel.conf, SlurmUser, log level
  ACCEL_TRY(startVendors());     // V-IPU and appliance clients, their call metrics
  ACCEL_TRY(startJobManager());  // topology, run and state directories, job steps
  ACCEL_TRY(startEvents());      // the outbox to the aggregator, the events relay
  holdReserves();                // ReserveSpace, on the records' file systems
  appliance_ = std::make_unique<ApplianceService>(
      *manager_, vendors_.appliance, *metrics_, [this](const event::Event& e) { emitEvent(e); },
      applianceOptions());
  manager_->setBudgetListener([this] { appliance_->rearmLimits(); });
  auto recovered = recoverJobs();  // the jobs the last daemon left
  ACCEL_TRY(recovered);
  startTelemetry();  // NvmlLibrary; the re-adopted GPU jobs sampled again
  makeHandlerContext();
  startIdleJobs(selfPath());       // IdleAfter, IdleAction: after the context names the node
  startXidWatch();                 // KernelLog: GPU Xids, after the drainer exists
  ACCEL_TRY(appliance_->start());  // after recovery: overdue limits act at once
  ACCEL_TRY(startMetrics());
  announceStart(*recovered);  // AgentStarted, and the ends of interrupted hooks
  ACCEL_TRY(startLoop());     // signals, status, heartbeat and watchdog timers
  ACCEL_TRY(startControl());  // ControlSocket and AdminSocket, and their first worker
  auto st = manager_->stats();
  log::info("start: ready on " + config_.control_socket + " with " +
            std::to_string(st.devices_total) + " accelerator(s) from " +
            manager_->inventorySource());
  notify::ready("ready: " + std::to_string(st.jobs) + " job(s), " +
                std::to_string(st.devices_in_use) + "/" + std::to_string(st.devices_total) +
                " devices in use");
  if (st.jobs > 0) startStaleSweep();
  return okStatus();
}

Status Daemon::loadConfig() {
  auto config = loadAccelConfig(options_.config_path);
  ACCEL_TRY(config);
  config_ = *config;
  log::setLevel(levelOf(config_.log_level));
  auto slurm_uid = uidOf(config_.slurm_user);
  ACCEL_TRY(slurm_uid);
  slurm_uid_ = *slurm_uid;
  hook_timeout_s_ = config_.hook_timeout.count();
  return okStatus();
}

// Every vendor call is timed (accel_driver_call_seconds) and noted in the
// node's health for `accelctl status`.
Status Daemon::startVendors() {
  if (options_.set_up_vendors) {
    auto vendors = options_.set_up_vendors(config_, options_.config_path, options_.hw_mock_dir);
    ACCEL_TRY(vendors);
    vendors_ = std::move(*vendors);
  }
  health_->configLoaded();
  health_->setCallTimer([m = metrics_.get()](const std::string& name, bool ok, double seconds) {
    m->driver_calls.with({name, ok ? "ok" : "error"}).observe(seconds);
  });
  vendors_.ipu = watchCalls(vendors_.ipu, health_);
  vendors_.appliance = watchCalls(vendors_.appliance, health_);
  return okStatus();
}

// The job steps, in the order a prolog runs them: the job directory (root's
// for now), the IPU partition (with a V-IPU controller), the fabric (when
// configured), the environment file, which sees every step's variables, and
// last the hand-over of the directory to the job's user.
Status Daemon::startJobManager() {
  std::string xml = options_.topology_xml.value_or(
      config_.topology_file.value_or(vendors_.topology_xml.value_or("")));
  topology::LoadOptions topo_opts;
  if (!xml.empty()) topo_opts.xml_path = xml;
  auto topology = topology::loadTopology(topo_opts);
  if (!topology.ok()) return topology.error().context("topology");
  agent::Inventory inventory = buildInventory(*topology, xml.empty() ? "live" : xml);

  // The run directory is traversable by job users (their job directories
  // live below it); the state directory is root's alone.
  ACCEL_TRY(makeDirectory(config_.run_dir, 0755).context("run directory"));
  ACCEL_TRY(makeDirectory(config_.run_dir + "/jobs", 0755).context("run directory"));
  std::string ipu_root = vendors_.vipu ? vendors_.vipu->ipuof_dir : "";
  ACCEL_TRY(startTrash(ipu_root));
  std::vector<std::unique_ptr<agent::JobStep>> steps;
  steps.push_back(std::make_unique<agent::JobDirStep>(
      config_.run_dir + "/jobs", ipu_root,
      [t = trash_.get()](const std::string& dir) { return t->dispose(dir); },
      agent::JobDirSpace{.size = config_.job_dir_size, .inodes = config_.job_dir_inodes}));
  if (vendors_.ipu) {
    agent::FollowerWait wait;
    wait.budget = [this] {
      return followerWaitBudget(std::chrono::seconds(hook_timeout_s_.load()));
    };
    steps.push_back(
        std::make_unique<agent::IpuPartitionStep>(vendors_.ipu, *vendors_.vipu, std::move(wait)));
  }
  if (config_.fabric) {
    if (!options_.set_up_fabric)
      return Error(ErrorCode::kUnsupported, "Fabric=yes, but this daemon has no fabric set-up")
          .context("fabric");
    auto fabric = options_.set_up_fabric(config_, *topology);
    if (!fabric.ok()) return fabric.error().context("fabric");
    steps.push_back(std::move(*fabric));
  }
  steps.push_back(std::make_unique<agent::EnvFileStep>());
  steps.push_back(std::make_unique<agent::JobDirHandOver>());
  manager_ =
      std::make_unique<agent::JobManager>(agent::JobStore(config_.run_dir + "/state"),
                                          std::move(inventory), std::move(steps), jobClock());
  // A node without a V-IPU controller serves IPU jobs only from IPUs of its
  // own; an IPU job sent to it otherwise is a configuration fault.
  if (!vendors_.ipu)
    manager_->setNoIpuController("no " + std::string(kVipuConfName) + " beside " +
                                 options_.config_path);
  return makeDirectory(config_.state_dir, 0700).context("state directory");
}

Status Daemon::startEvents() {
  auto opts = outboxOptionsFrom(config_, shortHostname());
  if (!opts.ok()) return opts.error().context("event outbox (" + options_.config_path + ")");
  opts->on_refused = [](const event::Nack& n) {
    log::warning("events: the aggregator refused event " + std::to_string(n.seq) + " of epoch " +
                 std::to_string(n.epoch) + " (" + event::nackReasonName(n.reason) +
                 (n.message.empty() ? std::string() : ": " + n.message) + ")" +
                 (n.skipped ? "; dropped, the events after it go on" : "; kept in the spool"));
  };
  auto outbox = event::Outbox::start(std::move(*opts));
  if (!outbox.ok()) return outbox.error().context("event outbox");
  outbox_ = std::move(*outbox);
  return startEventRelay();
}

Result<agent::RecoverySummary> Daemon::recoverJobs() {
  auto recovered = manager_->recover();
  if (!recovered.ok()) return recovered.error().context("recovering jobs");
  for (const auto& p : recovered->problems) log::warning("start: recovery: " + p);
  trash_->start();  // after recovery, which may have added to it; empties what earlier runs left
  log::info("start: jobs re-adopted " + std::to_string(recovered->adopted) +
            ", prologs rolled back " + std::to_string(recovered->rolled_back) +
            ", epilogs finished " + std::to_string(recovered->cleaned));
  return recovered;
}

// What the request handlers may reach: the subsystems, through these slots.
void Daemon::makeHandlerContext() {
  ctx_ = HandlerContext{};
  ctx_.manager = manager_.get();
  ctx_.metrics = metrics_.get();
  ctx_.slurm_uid = slurm_uid_;
  ctx_.node_name = shortHostname();
  ctx_.version = ACCEL_VERSION;
  ctx_.config_path = options_.config_path;
  ctx_.started_ns = wallNs();
  // On the prolog's path: 5 s at most, and never more than a quarter of the hook's own bound.
  if (config_.requeue_budget == AccelConfig::RequeueBudget::kCumulative)
    ctx_.earlier_runs_used_ns = [this](uint32_t job_id) {
      const int64_t quarter_ms = hook_timeout_s_.load() * 250;
      return earlierRunsUsedNsFromAccounting(
          job_id, static_cast<int>(std::clamp<int64_t>(quarter_ms, 250, 5000)));
    };
  // Off the hook's path: a worker thread asks slurmctld, through a child
  // process that is killed after 10 s.
  drainer_ = std::make_unique<NodeDrainer>(
      [self = selfPath()](const std::string& node, const std::string& reason) {
        return drainNodeIsolated(self, node, reason, 10s);
      },
      [health = health_](uint32_t job_id, const std::string& node, const Status& outcome) {
        if (!outcome.ok())
          health->nodeFault("drain: job " + std::to_string(job_id) + ": node " + node +
                            " not drained in Slurm: " + outcome.error().message());
      });
  ctx_.drainer = drainer_.get();
  handler_events_ = std::make_unique<OutboxEvents>(*outbox_, *appliance_,
                                                   config_.aggregator_address.value_or(""));
  ctx_.events = handler_events_.get();
  if (appliance_->hasAppliance()) ctx_.appliance = appliance_.get();
  ctx_.relay_events = relay_ != nullptr;
  ctx_.health = health_.get();
  ctx_.telemetry = telemetry_.get();
}

// The hooks that were running when the last daemon died failed without a
// word to the event stream; these are the ends of their jobs here.
void Daemon::announceStart(const agent::RecoverySummary& recovered) {
  emitEvent(event::AgentStarted{
      .version = ACCEL_VERSION,
      .jobs_recovered = static_cast<uint32_t>(recovered.adopted + recovered.cleaned)});
  for (const auto& end : recovered.ended) {
    if (end.rolled_back) {
      emitEvent(event::PrologFinished{
          .job_id = end.job_id,
          .result = event::JobResult::kFailed,
          .message = "accel-agentd stopped during the prolog; undone when it restarted"});
      emitEvent(
          event::EpilogFinished{.job_id = end.job_id,
                                .result = event::JobResult::kFailed,
                                .message = "the prolog was undone when accel-agentd restarted",
                                .restart_count = end.restart_count});
    } else {
      emitEvent(event::EpilogFinished{
          .job_id = end.job_id,
          .result = end.time_limit ? event::JobResult::kTimeLimit : event::JobResult::kOk,
          .message = "finished when accel-agentd restarted",
          .appliance_seconds = static_cast<uint64_t>(end.appliance_used_ns / 1'000'000'000),
          .restart_count = end.restart_count});
    }
  }
}

// The control sockets, served by the handlers' table (control_handler.h).
Status Daemon::startControl() {
  auto server = ControlServer::listen({.control_socket = config_.control_socket,
                                       .admin_socket = adminSocketPath(config_),
                                       .slurm_uid = slurm_uid_,
                                       .limits = admissionLimits(config_)});
  ACCEL_TRY(server);
  control_ = std::move(*server);
  return control_->serve(
      {.requests = &ctx_, .relay = relay_.get(), .answered = [this] { markStatusDirty(); }});
}

// The loop's file descriptors. The first heartbeat goes now, before READY:
// the aggregator knows the node's figures from its start.
Status Daemon::startLoop() {
  signal_fd_ = signalfd(-1, &signals_, SFD_CLOEXEC | SFD_NONBLOCK);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (signal_fd_ < 0 || epoll_fd_ < 0) return sysError("signalfd/epoll", errno);
  ACCEL_TRY(addToEpoll(epoll_fd_, signal_fd_));
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  status_timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (wake_fd_ < 0 || status_timer_fd_ < 0) return sysError("eventfd/timerfd", errno);
  ACCEL_TRY(addToEpoll(epoll_fd_, wake_fd_));
  ACCEL_TRY(addToEpoll(epoll_fd_, status_timer_fd_));
  heartbeat_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (heartbeat_fd_ < 0) return sysError("timerfd", errno);
  ACCEL_TRY(addToEpoll(epoll_fd_, heartbeat_fd_));
  armHeartbeat();

  auto wd = notify::watchdogInterval();
  if (wd.count() > 0) {
    timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (timer_fd_ < 0) return sysError("timerfd", errno);
    itimerspec its{};
    its.it_interval.tv_sec = wd.count() / 1'000'000;
    its.it_interval.tv_nsec = (wd.count() % 1'000'000) * 1000;
    its.it_value = its.it_interval;
    timerfd_settime(timer_fd_, 0, &its, nullptr);
    ACCEL_TRY(addToEpoll(epoll_fd_, timer_fd_));
  }
  return okStatus();
}

// After READY and off the loop: hooks are served meanwhile, and a slow or
// absent slurmctld delays nothing.
void Daemon::startStaleSweep() {
  stale_sweep_ = std::thread([this, self = selfPath()] {
    auto s = sweepStaleJobs(
        ctx_, [&](uint32_t id) { return jobPresenceIsolated(self, id, 5s); },
        [this] { return stale_sweep_stop_.load(); });
    if (s.cleaned + s.failed > 0)
      log::info("stale jobs: " + std::to_string(s.cleaned) + " cleaned, " +
                std::to_string(s.failed) + " failed, of " + std::to_string(s.asked) +
                " asked about");
  });
}

// Job directories go to a trash beside them and are removed by a thread of
// their own (trash_remover.h), which logs its outcomes (logTrashOutcome).
Status Daemon::startTrash(const std::string& ipu_root) {
  std::vector<std::string> roots{config_.run_dir + "/jobs"};
  if (!ipu_root.empty()) roots.push_back(ipu_root);
  auto trash = TrashRemover::create(std::move(roots), TrashRemover::Options{}, logTrashOutcome);
  if (!trash.ok()) return trash.error().context("job directories");
  trash_ = std::move(*trash);
  return okStatus();
}

ApplianceService::Options Daemon::applianceOptions() const {
  ApplianceService::Options o;
  o.poll_interval =
      std::chrono::duration_cast<std::chrono::milliseconds>(config_.appliance_poll_interval);
  o.kill_grace_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(config_.appliance_kill_grace).count();
  o.surrogate_steps = config_.surrogate_steps;
  o.config_path = options_.config_path;
  std::string self = selfPath();
  std::string beside = self.substr(0, self.rfind('/') + 1) + "accelctl";
  o.accelctl = access(beside.c_str(), X_OK) == 0 ? beside : "accelctl";  // installed side by side
  // Without cgroup tracking, slurmctld signals the job's steps at its limit,
  // through a child process killed after 10 s.
  o.ask_slurm = [self](uint32_t job_id, int sig, bool steps_only) {
    return signalJobIsolated(self, job_id, sig, steps_only, 10s);
  };
  // Processes that outlive SIGKILL are the node's fault: drained, and shown
  // by `accelctl status`. The drainer exists before the service starts.
  o.node_fault = [this](uint32_t job_id, const std::string& node, const std::string& reason) {
    health_->nodeFault(reason);
    if (drainer_) drainer_->drainOnce(job_id, node.empty() ? shortHostname() : node, reason);
  };
  o.tracking_changed = [health = health_](const std::string& how) { health->processTracking(how); };
  return o;
}

// MetricsAddress: the gauges read the job manager and the outbox at each
// scrape (both thread-safe), on the endpoint's own thread.
Status Daemon::startMetrics() {
  if (!config_.metrics_address) return okStatus();
  metrics_->watchJobs([this] { return double(manager_->stats().jobs); });
  metrics_->watchSpool([this] { return double(outbox_->stats().backlog); },
                       [this] { return double(outbox_->stats().spooled_bytes); });
  if (telemetry_) telemetry_->exportMetrics(metrics_->registry);
  auto endpoint = metrics::HttpEndpoint::start(
      *config_.metrics_address,
      [m = metrics_.get()](metrics::Format f) { return m->registry.render(f); });
  if (!endpoint.ok())
    return Error(endpoint.error().code(),
                 "MetricsAddress in " + options_.config_path + ": " + endpoint.error().message());
  metrics_http_ = std::move(*endpoint);
  log::info("metrics: served at http://" + *config_.metrics_address + "/metrics");
  return okStatus();
}

// AggregatorQueryAddress: `accelctl events --job` from this node, relayed to
// the aggregator with the node's key (the event stream's files).
Status Daemon::startEventRelay() {
  if (!config_.aggregator_query_address) return okStatus();
  RelayOptions o;
  o.endpoint = *config_.aggregator_query_address;
  auto server = event::loadPublicKey(config_.aggregator_public_key_file);
  if (!server.ok())
    return server.error().context("AggregatorPublicKeyFile in " + options_.config_path);
  o.server_public_key = *server;
  auto mine = event::loadSecretKey(config_.node_key_file);
  if (!mine.ok()) return mine.error().context("NodeKeyFile in " + options_.config_path);
  o.client_keys = *mine;
  auto relay = EventRelay::start(o);
  if (!relay.ok()) return relay.error().context(options_.config_path);
  relay_ = std::move(*relay);
  log::info("events: questions go to " + o.endpoint);
  return okStatus();
}

void Daemon::emitEvent(const event::Event& e) { publishOrLog(*outbox_, e); }

void Daemon::reload() {
  notify::reloading();
  auto config = loadAccelConfig(options_.config_path);
  if (!config.ok()) {
    log::error("reload: config not changed: " + config.error().message());
    health_->configRefused("config not changed: " + config.error().message());
  } else {
    auto inventory = loadInventory(*config);
    if (!inventory.ok()) {
      log::error("reload: topology not changed: " + inventory.error().message());
      health_->configRefused("topology not changed: " + inventory.error().message());
    } else {
      // Paths (socket, run dir) keep their start-up values; a restart changes them.
      config_.log_level = config->log_level;
      config_.hook_timeout = config->hook_timeout;
      if (config_.heartbeat_interval != config->heartbeat_interval) {
        config_.heartbeat_interval = config->heartbeat_interval;
        armHeartbeat();
      }
      control_->setLimits(admissionLimits(*config));
      config_.idle_after = config->idle_after;
      config_.idle_action = config->idle_action;
      if (idle_) idle_->setPolicy(idlePolicyOf(config_));
      hook_timeout_s_ = config_.hook_timeout.count();  // what a follower's prolog may wait
      log::setLevel(levelOf(config_.log_level));
      manager_->replaceInventory(std::move(*inventory));
      health_->configLoaded();
      log::info("reload: config and topology reloaded; jobs kept");
    }
  }
  publishStatus();
  notify::ready("reloaded");
}

int Daemon::run() {
  for (;;) {
    epoll_event events[8];
    int n = epoll_wait(epoll_fd_, events, 8, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      log::error(std::string("loop: epoll_wait: ") + std::strerror(errno));
      return 1;
    }
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == wake_fd_) {
        onStatusDirty();
      } else if (fd == status_timer_fd_) {
        uint64_t ticks = 0;
        (void)!read(status_timer_fd_, &ticks, sizeof(ticks));
        publishStatus();
      } else if (fd == heartbeat_fd_) {
        onHeartbeatTimer();
      } else if (fd == timer_fd_) {
        uint64_t ticks = 0;
        (void)!read(timer_fd_, &ticks, sizeof(ticks));
        notify::watchdog();
      } else if (fd == signal_fd_) {
        signalfd_siginfo si{};
        while (read(signal_fd_, &si, sizeof(si)) == sizeof(si)) {
          if (si.ssi_signo == SIGHUP) {
            reload();
            continue;
          }
          notify::stopping();
          log::info("stop: signal " + std::to_string(si.ssi_signo) +
                    "; jobs stay recorded for the next start");
          metrics_http_.reset();     // its scrapes read the outbox, which shuts down below
          control_->stop();          // requests in flight finish, workers are joined
          if (idle_) idle_->stop();  // its events go out before the outbox stops
          if (telemetry_) telemetry_->setProgressSink({});  // no progress after the outbox stops
          // Events still held for want of spool space cannot outlive the
          // process: say how many are lost (they are counted too).
          auto last = outbox_->shutdown();
          if (last.lost_at_shutdown > 0)
            log::warning("stop: " + std::to_string(last.lost_at_shutdown) +
                         " job event(s) held for want of spool space are lost; " +
                         event::describe(last));
          return 0;
        }
      }
    }
  }
}

}  // namespace accel::agentd
