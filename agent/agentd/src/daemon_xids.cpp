// GPU Xids at the daemon's start: the kernel log (KernelLog) followed on a
// thread of its own, each Xid tied to its job (gpu_xids.h). A node where the
// log cannot be opened works without, and says so in its log.
#include "accel/agent/cgroup_job.h"
#include "accel/agentd/daemon.h"
#include "accel/common/clock.h"
#include "accel/common/log.h"

namespace accel::agentd {

void Daemon::startXidWatch() {
  const std::string path = config_.kernel_log.empty() ? "/dev/kmsg" : config_.kernel_log;
  if (!options_.decode_xid.parse || !options_.decode_xid.classify) return;
  XidMonitor::Hooks hooks;
  hooks.decoder = options_.decode_xid;
  hooks.devices = [this] { return manager_->deviceUse(); };
  hooks.job_of = [](uint32_t pid) { return agent::jobOfPid(pid); };
  hooks.on_node = [this](uint32_t job_id) { return manager_->job(job_id).has_value(); };
  hooks.emit = [this](const event::Event& e) { emitEvent(e); };
  // A hardware Xid is the node's: noted with its faults, and the node drained.
  hooks.node_fault = [this](uint32_t job_id, const std::string& reason) {
    health_->nodeFault(reason);
    if (drainer_) drainer_->drain(job_id, ctx_.node_name, reason);
  };
  hooks.now_ns = [] { return wallNs(); };
  xids_ = std::make_unique<XidMonitor>(std::move(hooks), config_.state_dir + "/gpu-faults",
                                       &metrics_->registry);
  if (auto why = xids_->fileError(); !why.empty())
    log::error("start: xid: the GPU faults kept by the last agent cannot be read: " + why);
  for (const auto& f : xids_->faults()) health_->nodeFault(f.message);
  ctx_.xids = xids_.get();
  auto source = agent::KernelLogReader::open(path);
  if (!source.ok()) {
    log::warning("start: xid: " + source.error().message() +
                 "; GPU Xids are not read on this node");
    return;
  }
  kernel_log_ = std::make_unique<agent::KernelLogReader>(
      std::move(*source), [xids = xids_.get()](std::string_view line) { xids->onLine(line); });
  kernel_log_->start();
  log::info("start: xid: reading " + path + " for GPU Xid reports");
}

}  // namespace accel::agentd
