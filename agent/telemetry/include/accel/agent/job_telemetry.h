#pragma once
// What each job did with its devices, from the samples of a TelemetrySource:
// per job and device the utilization mean and max, the most memory used, the
// energy and the sample count; per process of the job its most GPU memory.
// Pure bookkeeping with no thread and no clock: TelemetrySampler feeds it
// from its thread, tests feed it literal readings.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "accel/telemetry/telemetry_source.h"

namespace accel::agent {

// One device a job holds: by PCI bus id (any form normalizePciBusId reads),
// or, when that is empty, by the source's device index.
struct DeviceRef {
  std::string pci_bus_id;
  std::optional<uint32_t> index;

  static DeviceRef bus(std::string id) { return DeviceRef{std::move(id), std::nullopt}; }
  static DeviceRef at(uint32_t i) { return DeviceRef{std::string(), i}; }
};

struct DeviceFigures {
  uint32_t index = 0;
  std::string pci_bus_id;  // normalized
  std::string uuid;
  bool found = false;        // the source has had this device in a sample
  uint64_t samples = 0;      // samples that read the device's utilization
  double util_mean_pct = 0;  // over those samples
  uint32_t util_max_pct = 0;
  std::optional<uint64_t> memory_used_max_bytes;
  // The total-energy counter's growth from the job's first sample to its
  // last, in joules; unset before two readings. A counter that went back
  // (a reset of the GPU) loses the interval it went back in, nothing more.
  std::optional<double> energy_j;
  // The latest sample's readings (unset: not read then).
  std::optional<uint32_t> util_last_pct;
  std::optional<uint64_t> memory_used_last_bytes;
};

struct ProcessFigures {
  uint32_t pid = 0;
  uint32_t device_index = 0;
  std::string pci_bus_id;
  std::optional<uint64_t> memory_max_bytes;  // unset: the source never reported it
};

struct JobFigures {
  uint32_t job_id = 0;
  uint64_t samples = 0;                   // samples taken while the job was accounted
  std::vector<DeviceFigures> devices;     // in the order given at start
  std::vector<ProcessFigures> processes;  // by pid, then device
  // The job's latest samples in a row in which every device of the job that
  // reported its utilization reported 0% (and at least one did): how long
  // its accelerators have been idle, in samples. 0: busy in the latest.
  uint64_t idle_samples = 0;
};

// A process on a device that a job holds, which belongs to no job of this
// node: a node problem (someone uses the GPU outside Slurm).
struct StrayProcess {
  uint32_t pid = 0;
  uint32_t device_index = 0;
  std::string pci_bus_id;
  std::optional<uint64_t> memory_bytes;
  std::vector<uint32_t> jobs_on_device;  // the jobs that hold the device
};

// The job a pid belongs to (agent::jobOfPid in production); unset: none.
using JobOfPid = std::function<std::optional<uint32_t>(uint32_t pid)>;

class JobTelemetry {
 public:
  // Starts accounting `job_id` on `devices`. Idempotent: a job already
  // accounted keeps its figures and devices.
  void startJob(uint32_t job_id, const std::vector<DeviceRef>& devices);
  // Stops accounting the job and returns its figures; unset for a job not
  // accounted (never started, or already ended).
  std::optional<JobFigures> endJob(uint32_t job_id);
  // The figures so far of a job being accounted.
  std::optional<JobFigures> snapshot(uint32_t job_id) const;
  // Every job being accounted, by id.
  std::vector<JobFigures> snapshots() const;
  bool empty() const { return jobs_.empty(); }
  size_t jobCount() const { return jobs_.size(); }

  // Adds one sample of the node's devices to every job accounted. Processes
  // are attributed with `job_of`; one on a held device whose job is not
  // accounted here is a stray, queued for takeStrays() once for as long as
  // it stays in the samples.
  void record(const std::vector<telemetry::DeviceReading>& readings, const JobOfPid& job_of);
  // The strays found since the last call.
  std::vector<StrayProcess> takeStrays();

 private:
  struct DeviceAccount {
    DeviceRef ref;
    DeviceFigures figures;
    uint64_t util_sum = 0;
    std::optional<uint64_t> last_energy_mj;
    uint64_t energy_mj = 0;
    uint64_t energy_readings = 0;
  };
  struct JobAccount {
    uint64_t samples = 0;
    uint64_t idle_samples = 0;
    std::vector<DeviceAccount> devices;
    std::map<std::pair<uint32_t, uint32_t>, ProcessFigures> processes;  // (pid, device)
  };

  static bool matches(const DeviceRef& ref, const telemetry::DeviceReading& reading);
  static void add(DeviceAccount& account, const telemetry::DeviceReading& reading);
  static JobFigures figuresOf(uint32_t job_id, const JobAccount& job);
  void attribute(const telemetry::DeviceReading& reading, const std::vector<uint32_t>& holders,
                 const JobOfPid& job_of, std::set<std::pair<uint32_t, uint32_t>>& seen);

  std::map<uint32_t, JobAccount> jobs_;
  std::set<std::pair<uint32_t, uint32_t>> strays_reported_;  // (pid, device) still present
  std::vector<StrayProcess> strays_pending_;
};

}  // namespace accel::agent
