#pragma once
// GPU telemetry as accel-agentd uses it: the sampler of agent/telemetry over
// the node's telemetry source (NVML, opened by the executable's composition
// root, telemetry_setup.cpp), or, when there is none, why not. The hooks
// only register and end jobs here: a prolog never waits on the source; an
// epilog waits at most endWait() for one last sample, and only for a job
// sampled fewer than twice (it would have no energy figure otherwise).
//
// Also the pieces the hooks and `accelctl status` need, pure so that tests
// call them on literal values: the job's devices as the sampler names them
// (devicesOf), a job's figures as its EpilogFinished carries them
// (eventFigures), and the stray-process line (strayLine).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "accel/agent/idle_watch.h"
#include "accel/agent/job_manager.h"
#include "accel/agent/telemetry_sampler.h"
#include "accel/agentd/gpu_progress.h"
#include "accel/common/metrics.h"
#include "accel/common/result.h"
#include "accel/events/event.h"
#include "accel/telemetry/telemetry_source.h"

namespace accel::agentd {

class NodeHealth;

// Opens the node's telemetry source from accel.conf (NvmlLibrary). Errors
// say why there is none ("no NVML: ..."); the node then works without.
using TelemetryOpen =
    std::function<Result<std::unique_ptr<telemetry::TelemetrySource>>(const std::string& library)>;

// What `accelctl status` shows of telemetry.
struct TelemetryStatusView {
  bool loaded = false;
  std::string reason;  // why not loaded
  std::string source;
  std::chrono::milliseconds interval{0};
  agent::TelemetrySampler::State state;
  uint64_t strays = 0;
};

// A UtilizationSource for the idle decision (idle_jobs.h): the jobs sampled
// now, none when not loaded.
class NodeTelemetry : public agent::UtilizationSource {
 public:
  // A node without telemetry, and why.
  explicit NodeTelemetry(std::string why);
  // Samples `source` every `interval` on a thread of its own (started here).
  NodeTelemetry(std::unique_ptr<telemetry::TelemetrySource> source,
                std::chrono::milliseconds interval, agent::JobOfPid job_of = {});
  ~NodeTelemetry() override;
  NodeTelemetry(const NodeTelemetry&) = delete;
  NodeTelemetry& operator=(const NodeTelemetry&) = delete;

  bool loaded() const { return sampler_ != nullptr; }

  // The prolog of a job holding GPUs: registers them (no wait; the sampler
  // takes its first sample on its own thread). Nothing for a job without.
  void jobStarted(uint32_t job_id, const std::vector<agent::DeviceRef>& devices);
  // The epilog: the job's figures; for a job sampled fewer than twice,
  // after waiting at most endWait() for a last sample (a longer job's
  // figures stop at its last sample: the hook's time stays as it was).
  // Unset for a job not sampled (no GPU, or no telemetry).
  std::optional<agent::JobFigures> jobEnded(uint32_t job_id);
  // How long an epilog waits for the last sample: twice the last sample's
  // wall time, at most kMaxEndWait; zero before any sample.
  std::chrono::milliseconds endWait() const;
  static constexpr std::chrono::milliseconds kMaxEndWait{200};

  // Strays found since the last call: each logged and noted once as a node
  // fault in `health` (when given). Returns how many were new.
  size_t reportStrays(NodeHealth* health);

  TelemetryStatusView status() const;

  // UtilizationSource.
  std::vector<agent::JobIdleness> idleness() const override;
  std::chrono::milliseconds sampleInterval() const override { return interval_; }

  // Where running jobs' GpuProgress events go (gpu_progress.h), from the
  // sampling thread after each sample; unset: nowhere. Once it returns, the
  // sink it replaced is no longer called (the daemon unsets it before its
  // outbox stops).
  using ProgressSink = std::function<void(const event::Event&)>;
  void setProgressSink(ProgressSink sink);

  // The per-job GPU gauges on the agent's metrics endpoint, read from the
  // sampler at each scrape (gpuSeries): nothing while no job is sampled.
  void exportMetrics(metrics::Registry& registry) const;

 private:
  std::string why_;
  std::chrono::milliseconds interval_{0};
  std::unique_ptr<agent::TelemetrySampler> sampler_;
  std::atomic<uint64_t> strays_{0};
  std::mutex progress_mu_;  // guards the two below; held while the sink runs
  ProgressSink progress_sink_;
  GpuProgressPacer pacer_;
  void publishProgress();
};

// The GPUs of a job, as the sampler finds them: by PCI bus id when the
// topology gave one, else by the GPU's ordinal among the node's GPUs (NVML's
// index order). Devices of other kinds are left out.
std::vector<agent::DeviceRef> devicesOf(const std::vector<agent::DeviceUse>& node_devices,
                                        const std::vector<uint32_t>& job_devices);

// A job's figures in the shape of EpilogFinished's `gpu` (MiB, joules),
// within GpuFigures' bounds: the first kMaxDevices devices, and the
// processes with the most memory first up to kMaxProcesses, the rest counted.
event::GpuFigures eventFigures(const agent::JobFigures& figures);

// What the GPU gauges show of the jobs sampled now: one series per device a
// job holds, labelled job_id (not "job", which is Prometheus' own) and gpu
// (NVML's index), or one per job for kIdleSeconds (job_id); a reading the
// device never gave has no series. At most one series per GPU of the node
// and gauge while GPUs are not shared, and none once the job's epilog ran.
enum class GpuGauge { kUtilization, kMemoryBytes, kEnergyJoules, kIdleSeconds };
metrics::Registry::Series gpuSeries(const std::vector<agent::JobFigures>& jobs, GpuGauge gauge,
                                    std::chrono::milliseconds interval);

// The line logged and kept as a node fault for a stray process.
std::string strayLine(const agent::StrayProcess& stray);

}  // namespace accel::agentd
