#include "accel/agentd/gpu_xids.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>

#include "accel/common/log.h"
#include "accel/common/safe_file.h"
#include "accel/telemetry/telemetry_source.h"

namespace accel::agentd {
namespace {

using telemetry::XidClass;

constexpr size_t kMaxFaultsFile = size_t{64} * 1024;

// One fault a line in the file: "AT_NS MESSAGE" (messages are printable).
std::vector<GpuFault> parseFaults(std::string_view text) {
  std::vector<GpuFault> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0 || sp > 19) continue;
    int64_t at = 0;
    bool digits = true;
    for (char c : line.substr(0, sp)) {
      if (c < '0' || c > '9') digits = false;
      at = at * 10 + (c - '0');
    }
    if (digits) out.push_back(GpuFault{at, std::string(line.substr(sp + 1, 1024))});
  }
  if (out.size() > XidMonitor::kMaxFaults)
    out.erase(out.begin(), out.end() - XidMonitor::kMaxFaults);
  return out;
}

}  // namespace

XidAttribution attributeXid(const telemetry::XidReport& report,
                            const std::vector<agent::DeviceUse>& devices,
                            const agent::JobOfPid& job_of,
                            const std::function<bool(uint32_t)>& on_node) {
  XidAttribution who;
  who.pci_bus_id = report.device + ".0";
  uint32_t ordinal = 0;
  for (const auto& d : devices) {
    if (d.kind != "gpu") continue;
    const uint32_t index = ordinal++;
    auto bus = telemetry::normalizePciBusId(d.pci_bus_id);
    if (!bus || !telemetry::isDevice(report, *bus)) continue;
    who.gpu = index;
    who.pci_bus_id = *bus;
    who.job_id = d.job_id;
    break;
  }
  if (who.job_id == 0 && report.pid && job_of) {
    // The pid is only a hint: its job must be one of this node's.
    if (auto job = job_of(*report.pid); job && *job != 0 && on_node && on_node(*job)) {
      who.job_id = *job;
      who.by_pid = true;
    }
  }
  return who;
}

std::string xidCodeLabel(telemetry::XidClass cls, uint32_t code) {
  return cls == XidClass::kOther ? "other" : std::to_string(code);
}

std::string xidFaultLine(const telemetry::XidReport& report, telemetry::XidClass cls,
                         const XidAttribution& who) {
  std::string line = "accel: node fault: GPU Xid " + std::to_string(report.code) + " (" +
                     telemetry::xidClassName(cls) + ") on GPU ";
  line += who.gpu ? std::to_string(*who.gpu) + " (" + who.pci_bus_id + ")" : who.pci_bus_id;
  line += who.job_id != 0 ? ", job " + std::to_string(who.job_id) : ", no job";
  if (!report.text.empty()) line += ": " + report.text;
  return line;
}

XidMonitor::XidMonitor(Hooks hooks, std::string faults_file, metrics::Registry* registry)
    : hooks_(std::move(hooks)), file_(std::move(faults_file)) {
  if (registry)
    counter_ = &registry->counters(
        "accel_gpu_xid",  // rendered with "_total"
        "Xid reports of the GPU driver read from the kernel log, by class (application, "
        "hardware, other) and code (the codes of the table; any other as \"other\").",
        {"class", "code"});
  // Every series there can be exists from the start at 0, so that the first
  // Xid of a code is an increase (AccelGpuHardwareXid) and not a new series.
  if (counter_ && hooks_.decoder.classify) {
    for (uint32_t code = 0; code < 256; ++code)
      if (auto cls = hooks_.decoder.classify(code); cls != XidClass::kOther)
        counter_->with({telemetry::xidClassName(cls), std::to_string(code)}).add(0);
    counter_->with({"other", "other"}).add(0);
  }
  if (file_.empty()) return;
  auto text = readFileNoFollow(file_, kMaxFaultsFile);
  if (text.ok())
    faults_ = parseFaults(*text);
  else if (text.error().code() != ErrorCode::kNotFound)
    file_error_ = text.error().message();
}

std::optional<telemetry::XidReport> XidMonitor::onLine(std::string_view line) {
  if (!hooks_.decoder.parse || !hooks_.decoder.classify) return std::nullopt;
  auto report = hooks_.decoder.parse(line);
  if (!report) return std::nullopt;
  const XidClass cls = hooks_.decoder.classify(report->code);
  const std::string cls_name = telemetry::xidClassName(cls);
  if (counter_) counter_->with({cls_name, xidCodeLabel(cls, report->code)}).add();
  const auto devices = hooks_.devices ? hooks_.devices() : std::vector<agent::DeviceUse>{};
  const XidAttribution who = attributeXid(*report, devices, hooks_.job_of, hooks_.on_node);
  const bool hardware = cls == XidClass::kHardware;
  const std::string fault = xidFaultLine(*report, cls, who);
  if (who.job_id != 0 && hooks_.emit)
    hooks_.emit(event::GpuXid{.job_id = who.job_id,
                              .code = report->code,
                              .gpu_class = cls_name,
                              .pci_bus_id = who.pci_bus_id,
                              .gpu = who.gpu ? static_cast<int32_t>(*who.gpu) : -1,
                              .pid = report->pid.value_or(0),
                              .text = report->text,
                              .drained = hardware && hooks_.node_fault != nullptr});
  if (!hardware) {
    // The job's own fault (or an unknown code): recorded, the node stays.
    log::info("xid: " + fault.substr(fault.find("GPU Xid")));
    return report;
  }
  log::error("xid: " + fault);
  keep(GpuFault{hooks_.now_ns ? hooks_.now_ns() : 0, fault});
  if (hooks_.node_fault) hooks_.node_fault(who.job_id, fault);
  return report;
}

void XidMonitor::keep(const GpuFault& fault) {
  std::lock_guard<std::mutex> g(mu_);
  faults_.push_back(fault);
  if (faults_.size() > kMaxFaults) faults_.erase(faults_.begin());
  save();
}

void XidMonitor::save() {
  if (file_.empty()) return;
  std::string text;
  for (const auto& f : faults_) text += std::to_string(f.at_ns) + " " + f.message + "\n";
  Status s = faults_.empty() ? (::unlink(file_.c_str()) == 0 || errno == ENOENT
                                    ? okStatus()
                                    : Status(sysError("remove " + file_, errno)))
                             : writeFileAtomic(file_, text, 0600);
  file_error_ = s.ok() ? "" : s.error().message();
  if (!s.ok()) log::error("xid: faults not kept across a restart: " + file_error_);
}

std::vector<GpuFault> XidMonitor::faults() const {
  std::lock_guard<std::mutex> g(mu_);
  return faults_;
}

Result<size_t> XidMonitor::clear() {
  std::lock_guard<std::mutex> g(mu_);
  const size_t n = faults_.size();
  faults_.clear();
  save();
  if (!file_error_.empty()) return Error(ErrorCode::kIo, file_error_);
  return n;
}

std::string XidMonitor::fileError() const {
  std::lock_guard<std::mutex> g(mu_);
  return file_error_;
}

}  // namespace accel::agentd
