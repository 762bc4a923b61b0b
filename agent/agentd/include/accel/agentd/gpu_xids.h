#pragma once
// NVIDIA's Xid reports from the kernel log, tied to the job that held the GPU
// (agent/telemetry's KernelLogReader hands each line to XidMonitor::onLine on
// its own thread, never a hook's):
//   - attributed by the line's PCI bus id to the job holding that GPU on this
//     node, else by its pid= through the pid's cgroup to a job of this node;
//   - recorded in that job's events (GpuXid) and counted on the metrics
//     (accel_gpu_xid_total{class,code});
//   - an application Xid is only recorded; a hardware Xid is a node fault:
//     kept (in StateDir, so a restart keeps it) and shown by `accelctl
//     status` until an operator clears it (`accelctl clear-fault`), and the
//     node is drained with a reason naming the Xid, the GPU and the job.
// The report and its classes are the telemetry seam's (telemetry::XidReport,
// telemetry::XidClass: accel/telemetry/xid_report.h); the Xid table:
// drivers/telemetry/nvml/README.md. The parser and the table are the NVML
// adapter's (nvml/xid.h), which only the executable links: it hands them in
// as an XidDecoder (telemetry_setup.h).
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/agent/job_manager.h"
#include "accel/agent/job_telemetry.h"
#include "accel/common/metrics.h"
#include "accel/common/result.h"
#include "accel/events/event.h"
#include "accel/telemetry/xid_report.h"

namespace accel::agentd {

// The parser of kernel log lines and the table of codes (nvmlXidDecoder()
// in production; tests give their own).
struct XidDecoder {
  std::function<std::optional<telemetry::XidReport>(std::string_view line)> parse;
  std::function<telemetry::XidClass(uint32_t code)> classify;
};

// Who an Xid belongs to on this node.
struct XidAttribution {
  uint32_t job_id = 0;          // 0: no job of this node
  std::optional<uint32_t> gpu;  // the GPU's index among the node's GPUs; unset: not one of them
  std::string pci_bus_id;       // the node's form of the GPU's bus id; the line's when unknown
  bool by_pid = false;          // the job was found through the line's pid
};

// `devices`: the node's accelerators and their holders (JobManager::deviceUse);
// `job_of`: a pid's job (cgroup); `on_node`: whether a job id is one of this
// node's. A GPU held by a job wins over the pid.
XidAttribution attributeXid(const telemetry::XidReport& report,
                            const std::vector<agent::DeviceUse>& devices,
                            const agent::JobOfPid& job_of,
                            const std::function<bool(uint32_t)>& on_node);

// The label a code of class `cls` has on accel_gpu_xid_total: the code when
// the table names it, "other" otherwise (the label set stays bounded).
std::string xidCodeLabel(telemetry::XidClass cls, uint32_t code);

// The node fault of a hardware Xid, which is also Slurm's drain reason:
// "accel: node fault: GPU Xid 79 (hardware) on GPU 0 (0000:3b:00.0), job 42:
// GPU has fallen off the bus.".
std::string xidFaultLine(const telemetry::XidReport& report, telemetry::XidClass cls,
                         const XidAttribution& who);

// A hardware fault kept until an operator clears it.
struct GpuFault {
  int64_t at_ns = 0;
  std::string message;  // xidFaultLine
};

class XidMonitor {
 public:
  struct Hooks {
    XidDecoder decoder;
    std::function<std::vector<agent::DeviceUse>()> devices;
    agent::JobOfPid job_of;
    std::function<bool(uint32_t)> on_node;
    std::function<void(const event::Event&)> emit;
    // A hardware fault: noted with the node's faults and the node drained.
    std::function<void(uint32_t job_id, const std::string& reason)> node_fault;
    std::function<int64_t()> now_ns;
  };
  static constexpr size_t kMaxFaults = 32;

  // `faults_file`: where the faults are kept (empty: in memory only); read
  // here, so a restarted agent still shows them. `registry` may be null.
  XidMonitor(Hooks hooks, std::string faults_file, metrics::Registry* registry);

  // One line of the kernel log. Returns the report when it was an Xid.
  std::optional<telemetry::XidReport> onLine(std::string_view line);

  std::vector<GpuFault> faults() const;
  // Forgets every fault (and the file's). Returns how many there were.
  Result<size_t> clear();
  // Why the faults file could not be read or written; empty: it could.
  std::string fileError() const;

 private:
  void keep(const GpuFault& fault);
  void save();  // with mu_ held

  Hooks hooks_;
  std::string file_;
  metrics::Family<metrics::Counter>* counter_ = nullptr;
  mutable std::mutex mu_;
  std::vector<GpuFault> faults_;
  std::string file_error_;
};

}  // namespace accel::agentd
