#include "accel/aggregator/event_json.h"

#include <ctime>
#include <type_traits>

namespace accel::aggregator {
namespace {

using J = nlohmann::ordered_json;

// A job's GPU figures on one node, every field; -1 where not known.
J gpuJson(const event::GpuFigures& g) {
  J devices = J::array();
  for (const auto& d : g.devices)
    devices.push_back({{"index", d.index},
                       {"pci_bus_id", d.pci_bus_id},
                       {"uuid", d.uuid},
                       {"samples", d.samples},
                       {"util_mean_pct", d.util_mean_pct},
                       {"util_max_pct", d.util_max_pct},
                       {"memory_used_max_mib",
                        d.memory_used_max_mib ? int64_t(*d.memory_used_max_mib) : int64_t{-1}},
                       {"energy_j", d.energy_j ? *d.energy_j : -1.0}});
  J processes = J::array();
  for (const auto& p : g.processes)
    processes.push_back(
        {{"pid", p.pid},
         {"device_index", p.device_index},
         {"memory_max_mib", p.memory_max_mib ? int64_t(*p.memory_max_mib) : int64_t{-1}}});
  return {{"samples", g.samples},
          {"devices", std::move(devices)},
          {"processes", std::move(processes)},
          {"processes_left_out", g.processes_left_out}};
}

struct ToJson {
  J operator()(const event::PrologStarted& e) {
    return {{"job_id", e.job_id},
            {"uid", e.uid},
            {"user", e.user},
            {"node_list", e.node_list},
            {"node_count", e.node_count},
            {"restart_count", e.restart_count}};
  }
  J operator()(const event::PrologFinished& e) {
    return {{"job_id", e.job_id},
            {"result", event::jobResultName(e.result)},
            {"devices", e.devices},
            {"partition", e.partition},
            {"duration_us", e.duration_us},
            {"message", e.message},
            {"accel_kind", e.accel_kind},
            {"appliance_limit_s", e.appliance_limit_s},
            {"limit_unmeasured", e.limit_unmeasured}};
  }
  J operator()(const event::EpilogFinished& e) {
    J out = {{"job_id", e.job_id},
             {"result", event::jobResultName(e.result)},
             {"duration_us", e.duration_us},
             {"message", e.message},
             {"cleanup_ok", e.cleanup_ok},
             {"appliance_seconds", e.appliance_seconds},
             {"restart_count", e.restart_count}};
    if (e.gpu) out["gpu"] = gpuJson(*e.gpu);  // absent: no GPU figures
    return out;
  }
  J operator()(const event::AgentStarted& e) {
    return {{"version", e.version}, {"jobs_recovered", e.jobs_recovered}};
  }
  J operator()(const event::TaskStarted& e) {
    return {{"job_id", e.job_id}, {"step_id", e.step_id}, {"task_id", e.task_id}, {"pid", e.pid}};
  }
  J operator()(const event::TaskEnded& e) {
    return {{"job_id", e.job_id},
            {"step_id", e.step_id},
            {"task_id", e.task_id},
            {"exit_code", e.exit_code}};
  }
  J operator()(const event::StepStarted& e) {
    return {
        {"job_id", e.job_id}, {"step_id", e.step_id}, {"name", e.name}, {"surrogate", e.surrogate}};
  }
  J operator()(const event::StepEnded& e) {
    return {{"job_id", e.job_id}, {"step_id", e.step_id}, {"exit_code", e.exit_code}};
  }
  J operator()(const event::ApplianceJobChanged& e) {
    return {{"job_id", e.job_id},
            {"appliance_job", e.appliance_job},
            {"state", event::applianceStateName(e.state)},
            {"csx_count", e.csx_count},
            {"seconds_used", e.seconds_used}};
  }
  J operator()(const event::TimeLimitWarning& e) {
    return {{"job_id", e.job_id}, {"limit_s", e.limit_s}, {"remaining_s", e.remaining_s}};
  }
  J operator()(const event::TimeLimitEnforced& e) {
    return {{"job_id", e.job_id}, {"limit_s", e.limit_s}, {"used_s", e.used_s}};
  }
  J operator()(const event::NodeHeartbeat& e) {
    return {{"accelerators", e.accelerators}, {"accelerators_busy", e.accelerators_busy},
            {"accel_kind", e.accel_kind},     {"jobs", e.jobs},
            {"backlog", e.backlog},           {"interval_s", e.interval_s}};
  }
  J operator()(const event::GpuProgress& e) {
    return {{"job_id", e.job_id}, {"idle_s", e.idle_s}, {"gpu", gpuJson(e.gpu)}};
  }
  J operator()(const event::GpuXid& e) {
    return {{"job_id", e.job_id},   {"code", e.code},
            {"class", e.gpu_class}, {"pci_bus_id", e.pci_bus_id},
            {"gpu", e.gpu},         {"pid", e.pid},
            {"text", e.text},       {"drained", e.drained}};
  }
  J operator()(const event::JobIdle& e) {
    return {{"job_id", e.job_id},
            {"idle_s", e.idle_s},
            {"devices", e.devices},
            {"action", event::idleActionName(e.action)},
            {"told_job", e.told_job}};
  }
};

}  // namespace

std::string isoTime(int64_t ns) {
  time_t secs = static_cast<time_t>(ns / 1'000'000'000);
  tm t{};
  gmtime_r(&secs, &t);
  char buf[40];
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &t);
  snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>((ns / 1'000'000) % 1000));
  return buf;
}

J eventJson(const StoredEvent& s) {
  J j{{"row", s.row},
      {"node", s.header.node},
      {"epoch", s.header.epoch},
      {"seq", s.header.seq},
      {"time", isoTime(s.header.time_ns)},
      {"kind", s.kind},
      {"job_id", s.job_id}};
  // Stored envelopes were verified on arrival; decoding again is still checked.
  auto env = event::decode(s.envelope);
  if (env.ok() && env->event) j["event"] = std::visit(ToJson{}, *env->event);
  return j;
}

std::string eventLine(const StoredEvent& s) {
  J j = eventJson(s);
  // For people, Slurm's special steps by the names Slurm gives them; the
  // JSON keeps the number.
  if (j.contains("event") && j["event"].contains("step_id")) {
    auto& step = j["event"]["step_id"];
    const auto id = step.get<uint32_t>();
    if (auto name = event::stepName(id); name != std::to_string(id)) step = name;
  }
  std::string line = isoTime(s.header.time_ns) + " " + s.header.node + " " +
                     std::to_string(s.header.epoch) + ":" + std::to_string(s.header.seq) + " " +
                     s.kind;
  if (s.job_id) line += " job=" + std::to_string(s.job_id);
  if (j.contains("event"))
    line += " " + j["event"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return line;
}

}  // namespace accel::aggregator
