#include "accel/ctl/status_view.h"

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <sstream>

#include "accel/schemas/control_generated.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;
using nlohmann::json;

std::string str(const flatbuffers::String* s) { return s ? s->str() : ""; }

// "3 min ago" style age; empty for a time in the future or unset.
std::string ago(int64_t ns, int64_t now_ns) {
  if (ns <= 0 || now_ns < ns) return "";
  int64_t s = (now_ns - ns) / 1'000'000'000;
  if (s < 120) return std::to_string(s) + " s ago";
  if (s < 7200) return std::to_string(s / 60) + " min ago";
  if (s < 172800) return std::to_string(s / 3600) + " h ago";
  return std::to_string(s / 86400) + " days ago";
}

std::string when(int64_t ns, int64_t now_ns) {
  std::string a = ago(ns, now_ns);
  return timeText(ns) + (a.empty() ? "" : " (" + a + ")");
}

// "10 s", "500 ms".
std::string durationMs(uint64_t ms) {
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms) + " ms";
}

json controllerJson(const fb::ControllerStatus* c) {
  return {{"name", str(c->name())},
          {"client", str(c->client())},
          {"last_call", str(c->last_call())},
          {"last_call_time", timeText(c->last_call_ns())},
          {"ok", c->ok()},
          {"error", str(c->error())},
          {"last_ok_time", timeText(c->last_ok_ns())},
          {"calls", c->calls()},
          {"failures", c->failures()}};
}

json eventsJson(const fb::EventsStatus* e) {
  if (e == nullptr) return nullptr;
  return {{"aggregator", str(e->aggregator())},
          {"link_up", e->link_up()},
          {"backlog", e->backlog()},
          {"spooled_bytes", e->spooled_bytes()},
          {"sent", e->sent()},
          {"acked", e->acked()},
          {"dropped_telemetry", e->dropped_telemetry()},
          {"dropped_lifecycle", e->dropped_lifecycle()},
          {"reconnects", e->reconnects()},
          {"held", e->held()},
          {"spool_io_errors", e->spool_io_errors()}};
}

std::string controllerLine(const fb::ControllerStatus* c, int64_t now_ns) {
  std::string line = str(c->client());
  if (c->calls() == 0) return line + ": not called since the daemon started";
  line += ": last call '" + str(c->last_call()) + "' " + (c->ok() ? "ok" : "FAILED") + " at " +
          when(c->last_call_ns(), now_ns);
  if (!c->ok()) line += ": " + str(c->error());
  line +=
      "; " + std::to_string(c->calls()) + " calls, " + std::to_string(c->failures()) + " failed";
  if (!c->ok() && c->last_ok_ns() > 0) line += ", last success " + timeText(c->last_ok_ns());
  return line;
}

std::string eventsLine(const fb::StatusInfo& s) {
  const auto* e = s.events_status();
  if (e == nullptr) return s.events() ? str(s.events()) : "no outbox";
  std::string line =
      str(e->aggregator()).empty()
          ? std::string("no aggregator (AggregatorAddress unset): events stay in the spool")
          : str(e->aggregator()) + ", link " + (e->link_up() ? "up" : "DOWN");
  line += "; backlog " + std::to_string(e->backlog()) + " events (" +
          std::to_string(e->spooled_bytes() >> 10) + " KiB) not yet acknowledged; sent " +
          std::to_string(e->sent()) + ", acked " + std::to_string(e->acked());
  uint64_t dropped = e->dropped_telemetry() + e->dropped_lifecycle();
  line += dropped ? ", DROPPED " + std::to_string(e->dropped_lifecycle()) + " lifecycle/" +
                        std::to_string(e->dropped_telemetry()) + " telemetry"
                  : ", none dropped";
  if (e->held() > 0)
    line += "; " + std::to_string(e->held()) + " HELD in memory for want of spool space";
  return line;
}

json telemetryJson(const fb::TelemetryStatus* t) {
  if (t == nullptr) return nullptr;
  return {{"loaded", t->loaded()},      {"reason", str(t->reason())},
          {"source", str(t->source())}, {"interval_ms", t->interval_ms()},
          {"samples", t->samples()},    {"failures", t->failures()},
          {"cpu_ns", t->cpu_ns()},      {"last_error", str(t->last_error())},
          {"jobs_sampled", t->jobs()},  {"stray_processes", t->strays()}};
}

// "no NVML", or the source, its interval and what the sampling thread did.
std::string telemetryLine(const fb::StatusInfo& s) {
  const auto* t = s.telemetry();
  if (t == nullptr) return "not reported by this agent";
  if (!t->loaded()) return "no NVML";
  char cpu[32];
  std::snprintf(cpu, sizeof cpu, "%.1f ms", static_cast<double>(t->cpu_ns()) / 1e6);
  std::string line = str(t->source()) + ", every " + durationMs(t->interval_ms()) + "; " +
                     std::to_string(t->samples()) + " samples, " + std::to_string(t->failures()) +
                     " failed; sampler CPU " + cpu + "; " + std::to_string(t->jobs()) +
                     (t->jobs() == 1 ? " job" : " jobs") + " sampled now";
  if (!str(t->last_error()).empty()) line += "; last error: " + str(t->last_error());
  return line;
}

// "1 of 2 in use"; a node without accelerators of its own says where its
// jobs' accelerators are instead of "0 of 0".
std::string devicesLine(const fb::StatusInfo& s) {
  if (s.devices_total() > 0)
    return std::to_string(s.devices_in_use()) + " of " + std::to_string(s.devices_total()) +
           " in use";
  std::string line = "none attached to this node";
  bool vipu = false, appliance = false;
  if (s.controllers())
    for (const auto* c : *s.controllers()) {
      vipu = vipu || str(c->name()) == "vipu";
      appliance = appliance || str(c->name()) == "appliance";
    }
  if (vipu && appliance)
    return line + ": jobs hold IPU partitions and CS-X systems (accelctl jobs)";
  if (vipu) return line + ": each job's IPUs are its V-IPU partition's (accelctl jobs)";
  if (appliance) return line + ": jobs hold the appliance's CS-X systems (accelctl jobs)";
  return line;
}

}  // namespace

std::string timeText(int64_t ns) {
  if (ns <= 0) return "-";
  time_t t = static_cast<time_t>(ns / 1'000'000'000);
  char buf[32];
  tm tmv{};
  localtime_r(&t, &tmv);
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tmv);
  return buf;
}

std::vector<std::string> statusProblems(const fb::StatusInfo& s, int64_t now_ns) {
  std::vector<std::string> p;
  if (!str(s.config_error()).empty())
    p.push_back("the last reload was refused, the old settings stay: " + str(s.config_error()));
  if (s.controllers())
    for (const auto* c : *s.controllers())
      if (c->calls() > 0 && !c->ok())
        p.push_back(str(c->name()) + ": the last call failed: " + str(c->error()));
  if (const auto* e = s.events_status()) {
    if (!str(e->aggregator()).empty() && !e->link_up())
      p.push_back("aggregator " + str(e->aggregator()) + " not reached; " +
                  std::to_string(e->backlog()) + " events wait in the spool");
    if (e->dropped_lifecycle() + e->dropped_telemetry() > 0)
      p.push_back(std::to_string(e->dropped_lifecycle() + e->dropped_telemetry()) +
                  " events dropped (EventSpoolMaxSize reached)");
    if (e->held() > 0)
      p.push_back(std::to_string(e->held()) +
                  " job events wait in memory: the spool is full or cannot be written (see "
                  "EventSpoolDir and "
                  "EventSpoolMaxSize); they are lost if the agent stops before there is room");
    if (e->spool_io_errors() > 0)
      p.push_back(std::to_string(e->spool_io_errors()) +
                  " event spool reads or syncs failed; see the agent's log");
  }
  if (s.gpu_faults())
    for (const auto* f : *s.gpu_faults())
      p.push_back("GPU hardware fault (until an operator runs 'accelctl clear-fault'): " +
                  str(f->message()));
  size_t recent = 0;
  if (s.errors())
    for (const auto* e : *s.errors())
      if (e->at_ns() > 0 && now_ns - e->at_ns() < kRecentErrorNs) ++recent;
  if (recent > 0)
    p.push_back(std::to_string(recent) + " node fault" + (recent > 1 ? "s" : "") +
                " in the last hour");
  return p;
}

// The GPU hardware faults kept until `accelctl clear-fault`, oldest first.
static json gpuFaultsJson(const fb::StatusInfo& s) {
  json out = json::array();
  if (s.gpu_faults())
    for (const auto* f : *s.gpu_faults())
      out.push_back({{"time", timeText(f->at_ns())}, {"message", str(f->message())}});
  return out;
}

std::string statusJson(const fb::StatusInfo& s, int64_t now_ns) {
  json use = json::array();
  if (s.device_use())
    for (const auto* d : *s.device_use())
      use.push_back({{"index", d->index()},
                     {"name", str(d->name())},
                     {"kind", str(d->kind())},
                     {"job_id", d->job_id()}});
  json controllers = json::array();
  if (s.controllers())
    for (const auto* c : *s.controllers()) controllers.push_back(controllerJson(c));
  // Node faults with their time; a daemon without them sends its plain list.
  json errors = json::array();
  if (s.errors()) {
    for (const auto* e : *s.errors())
      errors.push_back({{"time", timeText(e->at_ns())}, {"message", str(e->message())}});
  } else if (s.last_errors()) {
    for (const auto* e : *s.last_errors()) errors.push_back({{"time", "-"}, {"message", e->str()}});
  }
  auto problems = statusProblems(s, now_ns);
  json j = {{"healthy", problems.empty()},
            {"problems", problems},
            {"daemon", "running"},
            {"version", str(s.version())},
            {"node", str(s.node())},
            {"started", timeText(s.started_ns())},
            {"config", str(s.config_path())},
            {"config_loaded", timeText(s.config_loaded_ns())},
            {"config_error", str(s.config_error())},
            {"topology", str(s.topology_source())},
            {"controllers", controllers},
            {"events", str(s.events())},
            {"aggregator", eventsJson(s.events_status())},
            {"jobs", s.jobs()},
            {"devices_total", s.devices_total()},
            {"devices_in_use", s.devices_in_use()},
            {"device_use", use},
            {"limits_reach", str(s.process_tracking())},
            {"telemetry", telemetryJson(s.telemetry())},
            {"gpu_faults", gpuFaultsJson(s)},
            {"last_errors", errors}};
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string statusTable(const fb::StatusInfo& s, int64_t now_ns) {
  std::ostringstream o;
  auto problems = statusProblems(s, now_ns);
  o << "health      " << (problems.empty() ? "ok" : "NEEDS ATTENTION") << "\n";
  for (const auto& p : problems) o << "  - " << p << "\n";
  o << "daemon      running: accel-agentd " << str(s.version()) << " on " << str(s.node())
    << ", since " << when(s.started_ns(), now_ns) << "\n"
    << "config      " << str(s.config_path());
  if (s.config_loaded_ns() > 0) o << ", read " << when(s.config_loaded_ns(), now_ns);
  o << "\n";
  if (!str(s.config_error()).empty())
    o << "            reload refused: " << str(s.config_error()) << "\n";
  o << "topology    " << str(s.topology_source()) << "\n";
  if (s.controllers() == nullptr || s.controllers()->size() == 0) {
    o << "controllers none (no vipu.conf, no ApplianceCommand)\n";
  } else {
    for (const auto* c : *s.controllers()) {
      std::string label = str(c->name());
      label.resize(std::max<size_t>(label.size(), 11), ' ');
      o << label << " " << controllerLine(c, now_ns) << "\n";
    }
  }
  o << "events      " << eventsLine(s) << "\n"
    << "limits      reach "
    << (str(s.process_tracking()).empty()
            ? "not known yet (no job has had a task here since the start)"
            : str(s.process_tracking()))
    << "\n"
    << "telemetry   " << telemetryLine(s) << "\n"
    << "gpu faults  "
    << (s.gpu_faults() && s.gpu_faults()->size() > 0
            ? std::to_string(s.gpu_faults()->size()) + " kept until 'accelctl clear-fault'"
            : std::string("none"))
    << "\n"
    << "jobs        " << s.jobs() << "\n"
    << "devices     " << devicesLine(s) << "\n";
  if (s.device_use()) {
    for (const auto* d : *s.device_use()) {
      char line[160];
      std::snprintf(line, sizeof line, "  %-10s%-6s%s\n", str(d->name()).c_str(),
                    str(d->kind()).c_str(),
                    d->job_id() ? ("job " + std::to_string(d->job_id())).c_str() : "free");
      o << line;
    }
  }
  bool any = false;
  if (s.errors()) {
    for (const auto* e : *s.errors()) {
      o << (any ? "            " : "errors      ") << timeText(e->at_ns()) << "  "
        << str(e->message()) << "\n";
      any = true;
    }
  } else if (s.last_errors()) {
    for (const auto* e : *s.last_errors()) {
      o << (any ? "            " : "errors      ") << e->str() << "\n";
      any = true;
    }
  }
  if (!any) o << "errors      none since the daemon started\n";
  return o.str();
}

}  // namespace accel::ctl
