// GPU telemetry at the daemon's start: NVML from NvmlLibrary through the
// executable's adapter, sampled every TelemetryInterval on a thread of its
// own. A node where it cannot be loaded works as before; `accelctl status`
// says "no NVML" and why.
#include <chrono>

#include "accel/agentd/daemon.h"
#include "accel/common/log.h"

namespace accel::agentd {

void Daemon::startTelemetry() {
  const std::string library =
      config_.nvml_library.empty() ? std::string("libnvidia-ml.so.1") : config_.nvml_library;
  if (!options_.open_telemetry) {
    telemetry_ = std::make_unique<NodeTelemetry>("this daemon has no NVML adapter");
    return;
  }
  auto source = options_.open_telemetry(library);
  if (!source.ok()) {
    log::info("start: telemetry: " + source.error().message() + "; GPU jobs get no figures");
    telemetry_ = std::make_unique<NodeTelemetry>(source.error().message());
    return;
  }
  const std::string described = (*source)->describe();
  const auto interval =
      config_.telemetry_interval.count() > 0
          ? std::chrono::duration_cast<std::chrono::milliseconds>(config_.telemetry_interval)
          : std::chrono::milliseconds(10'000);
  telemetry_ = std::make_unique<NodeTelemetry>(std::move(*source), interval);
  // Running jobs' figures for `accelctl report`; telemetry, so a full spool
  // drops them (the next carries everything).
  telemetry_->setProgressSink([this](const event::Event& e) { (void)outbox_->publish(e); });
  log::info("start: telemetry: " + described + ", every " +
            std::to_string(interval.count() / 1000) + " s while a job holds a GPU");
  // Jobs re-adopted from the last daemon: their figures count from now.
  const auto devices = manager_->deviceUse();
  for (const auto& r : manager_->jobs())
    if (r.phase == agent::JobPhase::kReady && !r.devices.empty())
      telemetry_->jobStarted(r.spec.job_id, devicesOf(devices, r.devices));
}

}  // namespace accel::agentd
