#include "accel/agent/job_telemetry.h"

#include <algorithm>

namespace accel::agent {

using telemetry::DeviceReading;

void JobTelemetry::startJob(uint32_t job_id, const std::vector<DeviceRef>& devices) {
  if (jobs_.count(job_id) != 0) return;
  JobAccount job;
  for (const DeviceRef& ref : devices) {
    DeviceAccount account;
    account.ref = ref;
    if (auto normal = telemetry::normalizePciBusId(ref.pci_bus_id)) {
      account.ref.pci_bus_id = *normal;
    }
    account.figures.pci_bus_id = account.ref.pci_bus_id;
    account.figures.index = ref.index.value_or(0);
    job.devices.push_back(std::move(account));
  }
  jobs_.emplace(job_id, std::move(job));
}

std::optional<JobFigures> JobTelemetry::endJob(uint32_t job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return std::nullopt;
  JobFigures figures = figuresOf(job_id, it->second);
  jobs_.erase(it);
  return figures;
}

std::optional<JobFigures> JobTelemetry::snapshot(uint32_t job_id) const {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return std::nullopt;
  return figuresOf(job_id, it->second);
}

bool JobTelemetry::matches(const DeviceRef& ref, const DeviceReading& reading) {
  if (!ref.pci_bus_id.empty()) return ref.pci_bus_id == reading.pci_bus_id;
  return ref.index && *ref.index == reading.index;
}

void JobTelemetry::add(DeviceAccount& account, const DeviceReading& reading) {
  DeviceFigures& f = account.figures;
  f.found = true;
  f.index = reading.index;
  f.pci_bus_id = reading.pci_bus_id;
  f.uuid = reading.uuid;
  f.util_last_pct = reading.utilization_pct;
  f.memory_used_last_bytes = reading.memory_used_bytes;
  if (reading.utilization_pct) {
    ++f.samples;
    account.util_sum += *reading.utilization_pct;
    f.util_max_pct = std::max(f.util_max_pct, *reading.utilization_pct);
  }
  if (reading.memory_used_bytes) {
    f.memory_used_max_bytes =
        std::max(f.memory_used_max_bytes.value_or(0), *reading.memory_used_bytes);
  }
  if (reading.energy_mj) {
    if (account.last_energy_mj && *reading.energy_mj >= *account.last_energy_mj) {
      account.energy_mj += *reading.energy_mj - *account.last_energy_mj;
    }
    account.last_energy_mj = reading.energy_mj;
    ++account.energy_readings;
  }
}

void JobTelemetry::record(const std::vector<DeviceReading>& readings, const JobOfPid& job_of) {
  for (auto& [id, job] : jobs_) ++job.samples;
  std::set<std::pair<uint32_t, uint32_t>> seen_strays;
  // Per job: whether a device reported utilization in this sample, and
  // whether one reported any.
  std::map<uint32_t, std::pair<bool, bool>> read_busy;
  for (const DeviceReading& reading : readings) {
    std::vector<uint32_t> holders;
    for (auto& [id, job] : jobs_) {
      for (DeviceAccount& account : job.devices) {
        if (!matches(account.ref, reading)) continue;
        add(account, reading);
        if (reading.utilization_pct) {
          auto& [read, busy] = read_busy[id];
          read = true;
          busy = busy || *reading.utilization_pct > 0;
        }
        if (holders.empty() || holders.back() != id) holders.push_back(id);
      }
    }
    if (!holders.empty()) attribute(reading, holders, job_of, seen_strays);
  }
  // A sample that read none of a job's devices leaves its idle count as it was.
  for (const auto& [id, seen] : read_busy) {
    JobAccount& job = jobs_.at(id);
    job.idle_samples = seen.second ? 0 : job.idle_samples + 1;
  }
  // A stray that has left is forgotten, so a new one with its pid is told.
  strays_reported_ = std::move(seen_strays);
}

void JobTelemetry::attribute(const DeviceReading& reading, const std::vector<uint32_t>& holders,
                             const JobOfPid& job_of,
                             std::set<std::pair<uint32_t, uint32_t>>& seen) {
  for (const telemetry::ProcessUsage& p : reading.processes) {
    std::optional<uint32_t> owner = job_of ? job_of(p.pid) : std::nullopt;
    auto job = owner ? jobs_.find(*owner) : jobs_.end();
    if (job != jobs_.end()) {
      ProcessFigures& f = job->second.processes[{p.pid, reading.index}];
      f.pid = p.pid;
      f.device_index = reading.index;
      f.pci_bus_id = reading.pci_bus_id;
      if (p.memory_bytes) {
        f.memory_max_bytes = std::max(f.memory_max_bytes.value_or(0), *p.memory_bytes);
      }
      continue;
    }
    std::pair<uint32_t, uint32_t> key{p.pid, reading.index};
    seen.insert(key);
    if (strays_reported_.count(key) != 0) continue;
    strays_reported_.insert(key);
    strays_pending_.push_back(StrayProcess{.pid = p.pid,
                                           .device_index = reading.index,
                                           .pci_bus_id = reading.pci_bus_id,
                                           .memory_bytes = p.memory_bytes,
                                           .jobs_on_device = holders});
  }
}

std::vector<StrayProcess> JobTelemetry::takeStrays() {
  std::vector<StrayProcess> out;
  out.swap(strays_pending_);
  return out;
}

std::vector<JobFigures> JobTelemetry::snapshots() const {
  std::vector<JobFigures> out;
  out.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_) out.push_back(figuresOf(id, job));
  return out;
}

JobFigures JobTelemetry::figuresOf(uint32_t job_id, const JobAccount& job) {
  JobFigures out;
  out.job_id = job_id;
  out.samples = job.samples;
  out.idle_samples = job.idle_samples;
  for (const DeviceAccount& account : job.devices) {
    DeviceFigures f = account.figures;
    if (f.samples > 0) {
      f.util_mean_pct = static_cast<double>(account.util_sum) / static_cast<double>(f.samples);
    }
    if (account.energy_readings >= 2) f.energy_j = static_cast<double>(account.energy_mj) / 1000.0;
    out.devices.push_back(std::move(f));
  }
  for (const auto& [key, process] : job.processes) out.processes.push_back(process);
  return out;
}

}  // namespace accel::agent
