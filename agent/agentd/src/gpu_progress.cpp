#include "accel/agentd/gpu_progress.h"

#include "accel/agentd/node_telemetry.h"

namespace accel::agentd {

std::vector<event::GpuProgress> GpuProgressPacer::due(const std::vector<agent::JobFigures>& jobs,
                                                      Clock::time_point now,
                                                      std::chrono::milliseconds interval) {
  std::vector<event::GpuProgress> out;
  std::map<uint32_t, Sent> kept;
  for (const auto& job : jobs) {
    auto before = sent_.find(job.job_id);
    const bool known = before != sent_.end();
    bool send = false;
    if (job.samples > 0) {
      // The first sample, the first with an energy figure, then at most once a period.
      const bool first = !known;
      const bool first_energy = known && before->second.samples < 2 && job.samples >= 2;
      send = first || first_energy ||
             (job.samples > before->second.samples && now - before->second.at >= period_);
    }
    if (send) {
      out.push_back(
          event::GpuProgress{.job_id = job.job_id,
                             .idle_s = job.idle_samples * uint64_t(interval.count()) / 1000,
                             .gpu = eventFigures(job)});
      out.back().gpu.processes.clear();  // the report shows devices; the epilog has processes
      out.back().gpu.processes_left_out = 0;
      kept[job.job_id] = Sent{job.samples, now};
    } else if (known) {
      kept[job.job_id] = before->second;
    }
  }
  sent_ = std::move(kept);
  return out;
}

}  // namespace accel::agentd
