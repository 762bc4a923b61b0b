#include "accel/agentd/node_telemetry.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "accel/agentd/node_health.h"
#include "accel/common/log.h"

namespace accel::agentd {
namespace {

constexpr uint64_t kMiB = uint64_t{1024} * 1024;

std::optional<uint64_t> mib(const std::optional<uint64_t>& bytes) {
  if (!bytes) return std::nullopt;
  return (*bytes + kMiB / 2) / kMiB;
}

}  // namespace

NodeTelemetry::NodeTelemetry(std::string why) : why_(std::move(why)) {}

NodeTelemetry::NodeTelemetry(std::unique_ptr<telemetry::TelemetrySource> source,
                             std::chrono::milliseconds interval, agent::JobOfPid job_of)
    : interval_(interval) {
  sampler_ = std::make_unique<agent::TelemetrySampler>(
      std::move(source),
      agent::TelemetrySampler::Options{.interval = interval,
                                       .job_of = std::move(job_of),
                                       .after_sample = [this] { publishProgress(); }});
  sampler_->start();
}

NodeTelemetry::~NodeTelemetry() {
  if (sampler_) sampler_->stop();
}

void NodeTelemetry::jobStarted(uint32_t job_id, const std::vector<agent::DeviceRef>& devices) {
  if (sampler_ && !devices.empty()) sampler_->startJob(job_id, devices);
}

std::chrono::milliseconds NodeTelemetry::endWait() const {
  if (!sampler_) return std::chrono::milliseconds(0);
  const int64_t last_ns = sampler_->state().last_sample_ns;
  if (last_ns <= 0) return std::chrono::milliseconds(0);
  // Rounded up: a sample of a few microseconds (the fake) still gets 1 ms.
  auto twice = std::chrono::milliseconds((2 * last_ns + 999'999) / 1'000'000);
  return std::min(twice, kMaxEndWait);
}

std::optional<agent::JobFigures> NodeTelemetry::jobEnded(uint32_t job_id) {
  if (!sampler_) return std::nullopt;
  // A job sampled twice already has its energy and ends at once (its figures
  // stop at the last sample, at most one interval before the epilog); a
  // shorter one waits for a last sample, so that it gets an energy figure.
  auto so_far = sampler_->snapshot(job_id);
  const bool short_job = so_far && so_far->samples < 2;
  return sampler_->endJob(job_id, short_job ? endWait() : std::chrono::milliseconds(0));
}

size_t NodeTelemetry::reportStrays(NodeHealth* health) {
  if (!sampler_) return 0;
  auto strays = sampler_->takeStrays();
  for (const auto& s : strays) {
    const std::string line = strayLine(s);
    log::warning(line);
    if (health) health->nodeFault(line);
  }
  strays_ += strays.size();
  return strays.size();
}

void NodeTelemetry::setProgressSink(ProgressSink sink) {
  std::lock_guard lock(progress_mu_);
  progress_sink_ = std::move(sink);
}

void NodeTelemetry::publishProgress() {
  std::lock_guard lock(progress_mu_);
  if (!progress_sink_ || !sampler_) return;
  for (auto& p : pacer_.due(sampler_->snapshots(), GpuProgressPacer::Clock::now(), interval_))
    progress_sink_(event::Event(std::move(p)));
}

std::vector<agent::JobIdleness> NodeTelemetry::idleness() const {
  if (!sampler_) return {};
  return agent::idlenessOf(sampler_->snapshots());
}

TelemetryStatusView NodeTelemetry::status() const {
  TelemetryStatusView v;
  v.loaded = loaded();
  v.reason = why_;
  v.interval = interval_;
  v.strays = strays_.load();
  if (sampler_) {
    v.state = sampler_->state();
    v.source = v.state.source;
  }
  return v;
}

std::vector<agent::DeviceRef> devicesOf(const std::vector<agent::DeviceUse>& node_devices,
                                        const std::vector<uint32_t>& job_devices) {
  std::vector<agent::DeviceRef> refs;
  uint32_t gpu_ordinal = 0;
  for (const auto& d : node_devices) {
    if (d.kind != "gpu") continue;
    const uint32_t ordinal = gpu_ordinal++;
    if (std::find(job_devices.begin(), job_devices.end(), d.index) == job_devices.end()) continue;
    refs.push_back(d.pci_bus_id.empty() ? agent::DeviceRef::at(ordinal)
                                        : agent::DeviceRef::bus(d.pci_bus_id));
  }
  return refs;
}

event::GpuFigures eventFigures(const agent::JobFigures& figures) {
  event::GpuFigures out;
  out.samples = figures.samples;
  for (const auto& d : figures.devices) {
    if (out.devices.size() == event::GpuFigures::kMaxDevices) break;
    event::GpuDeviceFigures f;
    f.index = d.index;
    f.pci_bus_id = d.pci_bus_id;
    f.uuid = d.uuid;
    f.samples = d.samples;
    f.util_mean_pct = static_cast<float>(std::round(d.util_mean_pct * 10) / 10);
    f.util_max_pct = d.util_max_pct;
    f.memory_used_max_mib = mib(d.memory_used_max_bytes);
    if (d.energy_j) f.energy_j = std::round(*d.energy_j * 10) / 10;
    out.devices.push_back(std::move(f));
  }
  std::vector<agent::ProcessFigures> procs = figures.processes;
  if (procs.size() > event::GpuFigures::kMaxProcesses) {
    // Keep the processes that held the most memory; the rest are counted.
    std::stable_sort(procs.begin(), procs.end(), [](const auto& a, const auto& b) {
      return a.memory_max_bytes.value_or(0) > b.memory_max_bytes.value_or(0);
    });
    out.processes_left_out = static_cast<uint32_t>(procs.size() - event::GpuFigures::kMaxProcesses);
    procs.resize(event::GpuFigures::kMaxProcesses);
    std::stable_sort(procs.begin(), procs.end(), [](const auto& a, const auto& b) {
      return std::tie(a.pid, a.device_index) < std::tie(b.pid, b.device_index);
    });
  }
  for (const auto& p : procs)
    out.processes.push_back(
        event::GpuProcessFigures{p.pid, p.device_index, mib(p.memory_max_bytes)});
  return out;
}

std::string strayLine(const agent::StrayProcess& stray) {
  std::string line = "telemetry: process " + std::to_string(stray.pid) + " uses GPU " +
                     std::to_string(stray.device_index);
  if (!stray.pci_bus_id.empty()) line += " (" + stray.pci_bus_id + ")";
  if (stray.memory_bytes) line += " with " + std::to_string(*mib(stray.memory_bytes)) + " MiB";
  line += " and belongs to no job of this node, while a job holds that GPU";
  return line;
}

metrics::Registry::Series gpuSeries(const std::vector<agent::JobFigures>& jobs, GpuGauge gauge,
                                    std::chrono::milliseconds interval) {
  metrics::Registry::Series out;
  for (const auto& job : jobs) {
    const std::string id = std::to_string(job.job_id);
    if (gauge == GpuGauge::kIdleSeconds) {
      out.push_back({{id}, double(job.idle_samples) * double(interval.count()) / 1000.0});
      continue;
    }
    for (const auto& d : job.devices) {
      if (!d.found) continue;
      std::optional<double> v;
      if (gauge == GpuGauge::kUtilization && d.util_last_pct) v = double(*d.util_last_pct);
      if (gauge == GpuGauge::kMemoryBytes && d.memory_used_last_bytes)
        v = double(*d.memory_used_last_bytes);
      if (gauge == GpuGauge::kEnergyJoules && d.energy_j) v = *d.energy_j;
      if (v) out.push_back({{id, std::to_string(d.index)}, *v});
    }
  }
  return out;
}

void NodeTelemetry::exportMetrics(metrics::Registry& registry) const {
  if (!sampler_) return;
  auto read = [this](GpuGauge gauge) {
    return [this, gauge] { return gpuSeries(sampler_->snapshots(), gauge, interval_); };
  };
  registry.gaugesFn("accel_gpu_utilization_percent",
                    "SM utilization of a GPU a job holds, at the latest sample (NVML).",
                    {"job_id", "gpu"}, read(GpuGauge::kUtilization));
  registry.gaugesFn("accel_gpu_memory_used_bytes",
                    "Memory in use on a GPU a job holds, at the latest sample (all processes).",
                    {"job_id", "gpu"}, read(GpuGauge::kMemoryBytes));
  registry.gaugesFn("accel_gpu_energy_joules",
                    "Energy a GPU a job holds has used since the job's first sample.",
                    {"job_id", "gpu"}, read(GpuGauge::kEnergyJoules));
  registry.gaugesFn("accel_gpu_job_idle_seconds",
                    "How long every GPU of the job has read 0% utilization, in a row up to the "
                    "latest sample (samples times TelemetryInterval); 0 while any is busy.",
                    {"job_id"}, read(GpuGauge::kIdleSeconds));
}

}  // namespace accel::agentd
