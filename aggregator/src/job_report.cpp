#include "accel/aggregator/job_report.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "accel/aggregator/event_json.h"

namespace accel::aggregator {
namespace {

using J = nlohmann::ordered_json;

// running: no epilog in yet; ending: some in, not every node's; finished:
// every node's (the summary is complete).
const char* stateOf(const JobSummary& s) {
  if (s.complete()) return "finished";
  return s.epilog_nodes.empty() ? "running" : "ending";
}

double tenths(double v) { return std::round(v * 10) / 10; }

J deviceRow(const std::string& node, const event::GpuDeviceFigures& d) {
  const bool read = d.samples > 0;
  return {{"node", node},
          {"index", d.index},
          {"util_mean_pct", read && std::isfinite(d.util_mean_pct)
                                ? J(tenths(std::clamp<double>(d.util_mean_pct, 0, 100)))
                                : J(nullptr)},
          {"util_max_pct", read ? J(d.util_max_pct) : J(nullptr)},
          {"memory_max_mib", d.memory_used_max_mib ? J(*d.memory_used_max_mib) : J(nullptr)},
          {"energy_j", d.energy_j ? J(std::llround(*d.energy_j)) : J(nullptr)},
          {"samples", d.samples},
          {"used", d.util_max_pct > 0}};
}

// The figures of `node`: its epilog's once that is in (and carried some),
// otherwise its latest progress; nullptr when it sent neither.
const std::vector<event::GpuDeviceFigures>* figuresOf(const JobSummary& s, const std::string& node,
                                                      std::string* from) {
  const auto final_figures = s.gpu.find(node);
  const auto live = s.live_gpu.find(node);
  if (s.epilog_nodes.contains(node) && final_figures != s.gpu.end()) {
    *from = "epilog";
    return &final_figures->second;
  }
  if (live != s.live_gpu.end()) {
    *from = "live";
    return &live->second.devices;
  }
  *from = "none";
  return nullptr;
}

std::string counted(uint64_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// "45 s", "12 min 5 s", "3 h 4 min".
std::string duration(uint64_t s) {
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600)
    return std::to_string(s / 60) + " min" + (s % 60 ? " " + std::to_string(s % 60) + " s" : "");
  return std::to_string(s / 3600) + " h" +
         (s % 3600 / 60 ? " " + std::to_string(s % 3600 / 60) + " min" : "");
}

}  // namespace

J composeReport(const JobSummary& s) {
  J r;
  r["v"] = 1;
  r["job_id"] = s.job_id;
  r["state"] = stateOf(s);
  r["line"] = "";  // below, from the fields
  r["result"] = event::jobResultName(s.result);
  r["accel"] = s.accel_kind;
  r["count"] = s.accel_count;
  r["partition"] = s.partition;

  J nodes = J::array(), devices = J::array();
  uint64_t left_out = 0, with_figures = 0, used = 0, held_gpus = 0, util_n = 0;
  double util_sum = 0, energy = 0;
  bool any_energy = false;
  std::optional<uint64_t> idle;
  // A node's own devices are its GPUs (IPUs belong to partitions).
  if (s.accel_kind == "gpu" || s.accel_kind == "mixed")
    for (const auto& [node, n] : s.local_devices) held_gpus += n;
  for (const auto& node : s.allNodes()) {
    std::string from;
    const auto* figures = figuresOf(s, node, &from);
    const auto live = s.live_gpu.find(node);
    const bool has_live = live != s.live_gpu.end();
    J row{{"name", node}, {"figures", from}, {"epilog", s.epilog_nodes.contains(node)}};
    row["updated"] = from == "live" && live->second.received_ns > 0
                         ? J(isoTime(live->second.received_ns))
                         : J(nullptr);
    row["idle_s"] = has_live ? J(live->second.idle_s) : J(nullptr);
    if (has_live) idle = std::min(idle.value_or(live->second.idle_s), live->second.idle_s);
    if (nodes.size() < kMaxReportNodes) nodes.push_back(std::move(row));
    if (!figures) continue;
    for (const auto& d : *figures) {
      ++with_figures;
      if (d.util_max_pct > 0) ++used;
      if (d.samples > 0 && std::isfinite(d.util_mean_pct)) {
        util_sum += std::clamp<double>(d.util_mean_pct, 0, 100);
        ++util_n;
      }
      if (d.energy_j) {
        energy += *d.energy_j;
        any_energy = true;
      }
      if (devices.size() < kMaxReportDevices)
        devices.push_back(deviceRow(node, d));
      else
        ++left_out;
    }
  }
  r["gpus"] = {{"held", std::max(held_gpus, with_figures)},
               {"with_figures", with_figures},
               {"used", used},
               {"util_mean_pct", util_n ? J(tenths(util_sum / double(util_n))) : J(nullptr)},
               {"energy_j", any_energy ? J(std::llround(energy)) : J(nullptr)}};
  r["idle_s"] = idle ? J(*idle) : J(nullptr);
  r["limit"] = s.appliance_limit_s > 0 ? J{{"appliance_limit_s", s.appliance_limit_s},
                                           {"appliance_s", s.applianceSeconds()}}
                                       : J(nullptr);
  J errors{{"prolog", J(s.errors)},
           {"cleanup_failed", J(s.cleanup_failed)},
           {"limit_unmeasured", J(s.limit_unmeasured)}};
  // Device errors (Xid) as the summary carries them, when it does.
  const auto comment = nlohmann::json::parse(toCommentJson(s), nullptr, false);
  if (comment.is_object() && comment.contains("xid")) errors["xid"] = comment["xid"];
  r["errors"] = std::move(errors);
  // The nodes' job_idle notes (IdleAfter) and why the job was ended, if the
  // agent ended it (IdleAction=cancel): as the summary carries them.
  r["idle"] = comment.is_object() && comment.contains("idle") ? J(comment["idle"]) : J(J::object());
  r["ended"] = comment.is_object() && comment.contains("ended") ? J(comment["ended"]) : J(nullptr);
  J missing = J::array();
  if (!s.complete())
    for (const auto& n : s.missingNodes())
      if (missing.size() < kMaxReportNodes) missing.push_back(n);
  r["missing_nodes"] = std::move(missing);
  const uint64_t node_count = s.allNodes().size();
  r["nodes_left_out"] = node_count - nodes.size();
  r["nodes"] = std::move(nodes);
  r["devices_left_out"] = left_out;
  r["devices"] = std::move(devices);
  r["line"] = plainLine(r);
  return r;
}

std::string plainLine(const J& r) {
  const bool running = r.at("state") != "finished";
  const auto& g = r.at("gpus");
  const auto held = g.at("held").get<uint64_t>();
  const auto with_figures = g.at("with_figures").get<uint64_t>();
  const std::string accel = r.at("accel").get<std::string>();
  std::string line = running ? "holds " : "held ";
  if (held > 0) {
    line += counted(held, "GPU");
    if (with_figures == 0) {
      line += running ? "; no utilization figures yet"
                      : "; no utilization figures (its nodes sample no GPUs)";
    } else {
      line += (running ? ", uses " : ", used ") + std::to_string(g.at("used").get<uint64_t>()) +
              " of them";
      if (!g.at("util_mean_pct").is_null())
        line += ", mean " + std::to_string(std::lround(g.at("util_mean_pct").get<double>())) + "%";
      if (running) line += " so far";
    }
  } else if (accel == "ipu") {
    line += counted(r.at("count").get<uint64_t>(), "IPU");
    if (const auto p = r.at("partition").get<std::string>(); !p.empty())
      line += " in partition " + p;
    line += "; IPUs give no utilization figures";
  } else if (accel == "appliance") {
    line = running ? "uses the appliance" : "used the appliance";
  } else {
    line += "no accelerators";
  }
  if (const auto& ended = r.at("ended"); ended.is_string())
    line += "; ended by the agent: " + ended.get<std::string>();
  if (const auto& limit = r.at("limit"); !limit.is_null()) {
    const auto cap = limit.at("appliance_limit_s").get<uint64_t>();
    const auto spent = limit.at("appliance_s").get<uint64_t>();
    line += ", appliance time " + duration(spent) + " of " + duration(cap) + " (" +
            std::to_string(spent * 100 / cap) + "%)";
  }
  return line;
}

std::string reportText(const JobSummary& summary) {
  J r = composeReport(summary);
  auto text = r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() <= kMaxReportBytes) return text;
  r["nodes_left_out"] = r["nodes_left_out"].get<uint64_t>() + r["nodes"].size();
  r["nodes"] = J::array();
  r["devices_left_out"] = r["devices_left_out"].get<uint64_t>() + r["devices"].size();
  r["devices"] = J::array();
  return r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace accel::aggregator
