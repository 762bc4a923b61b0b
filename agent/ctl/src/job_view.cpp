#include "accel/ctl/job_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "accel/common/slurm_time.h"
#include "accel/ctl/status_view.h"
#include "accel/schemas/control_generated.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;
using nlohmann::json;

std::string str(const flatbuffers::String* s) { return s ? s->str() : ""; }

// The value of one of the variables the job's tasks receive; empty if unset.
std::string envValue(const fb::JobInfo& j, std::string_view name) {
  if (j.env())
    for (const auto* e : *j.env())
      if (e->name() && e->name()->string_view() == name) return str(e->value());
  return "";
}

// The IPUs of the job's V-IPU partition, named as the job's events name
// them ("p47:0,p47:1"); "partition p47" from a daemon that does not say how
// many it holds.
std::string partitionIpus(const fb::JobInfo& j) {
  std::string name = str(j.ipu_partition());
  if (name.empty()) name = envValue(j, "IPUOF_VIPU_API_PARTITION_ID");
  if (name.empty()) return "";
  if (j.ipus() == 0) return "partition " + name;
  if (j.ipus() > 4)
    return name + ":0.." + name + ":" + std::to_string(j.ipus() - 1) + " (" +
           std::to_string(j.ipus()) + " IPUs)";
  std::string text;
  for (uint32_t i = 0; i < j.ipus(); ++i)
    text += (text.empty() ? "" : ",") + name + ":" + std::to_string(i);
  return text;
}

// CS-X systems held by the job's appliance jobs that run now.
uint32_t runningSystems(const fb::JobInfo& j) {
  uint32_t n = 0;
  if (j.appliance_jobs())
    for (const auto* a : *j.appliance_jobs())
      if (str(a->state()) == "running") n += a->systems();
  return n;
}

// "wsjob-x: running, 2 CS-X, created ..., started ...".
std::string applianceJobLine(const fb::ApplianceJobInfo& a) {
  std::string line = str(a.id()) + ": " + (str(a.state()).empty() ? "unknown" : str(a.state())) +
                     ", " +
                     (a.systems() ? std::to_string(a.systems()) + " CS-X" : "no CS-X (compile)");
  if (a.created_ns() > 0) line += ", created " + timeText(a.created_ns());
  if (a.started_ns() > 0) line += ", started " + timeText(a.started_ns());
  if (a.ended_ns() > 0) line += ", ended " + timeText(a.ended_ns());
  return line;
}

// "00:12:34", and the job's limit when it has one (its tasks' variable holds seconds).
std::string applianceTimeLine(const fb::JobInfo& j) {
  std::string line = durationText(j.appliance_seconds()) + " used";
  const std::string limit = envValue(j, "ACCEL_APPLIANCE_TIME_LIMIT");
  char* end = nullptr;
  const double s = limit.empty() ? 0 : std::strtod(limit.c_str(), &end);
  if (s > 0 && end && *end == '\0') line += " of its limit of " + durationText(s);
  return line;
}

}  // namespace

std::string durationText(double seconds) {
  if (!(seconds > 0)) return formatSlurmTime(SlurmDuration());
  const double whole = std::floor(std::min<double>(seconds, kMaxSlurmTimeSeconds));
  return formatSlurmTime(SlurmDuration::fromSeconds(static_cast<int64_t>(whole)));
}

std::string jobDevices(const fb::JobInfo& j) {
  std::vector<std::string> held;
  if (auto local = envValue(j, "ACCEL_DEVICES"); !local.empty()) held.push_back(local);
  if (auto ipus = partitionIpus(j); !ipus.empty()) held.push_back(ipus);
  if (uint32_t csx = runningSystems(j); csx > 0) held.push_back(std::to_string(csx) + " CS-X");
  if (held.empty()) return "none";
  std::string text;
  for (const auto& h : held) text += (text.empty() ? "" : " + ") + h;
  return text;
}

std::string readyText(const fb::JobInfo& j) {
  if (j.ready_ns() > 0) return timeText(j.ready_ns());
  return j.state() == fb::JobState::Prolog ? "not yet" : "never";
}

std::string stateText(const fb::JobInfo& j) {
  const char* name = fb::EnumNameJobState(j.state());
  if (name != nullptr && *name != '\0') return name;
  return "unknown (" + std::to_string(static_cast<unsigned>(j.state())) + ")";
}

std::string jobsTable(const std::vector<const fb::JobInfo*>& jobs) {
  if (jobs.empty()) return "no jobs on this node\n";
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %-12s %-8s %-20s %s\n", "JOBID", "USER", "STATE", "READY",
                "DEVICES");
  o << line;
  for (const auto* j : jobs) {
    std::snprintf(line, sizeof line, "%-10u %-12s %-8s %-20s ", j->job_id(), str(j->user()).c_str(),
                  stateText(*j).c_str(), readyText(*j).c_str());
    o << line << jobDevices(*j) << "\n";
  }
  return o.str();
}

std::string jobText(const fb::JobInfo& j) {
  std::ostringstream o;
  o << "job         " << j.job_id() << " (" << str(j.user()) << ")\n"
    << "state       " << stateText(j) << "\n"
    << "ready       " << readyText(j);
  if (j.ready_ns() == 0 && j.state() == fb::JobState::Prolog && j.prolog_started_ns() > 0)
    o << " (its prolog started " << timeText(j.prolog_started_ns()) << ")";
  o << "\n"
    << "devices     " << jobDevices(j) << "\n"
    << "directory   " << (str(j.job_dir()).empty() ? "none" : str(j.job_dir())) << "\n";
  if (j.appliance_jobs()) {
    for (const auto* a : *j.appliance_jobs()) o << "appliance   " << applianceJobLine(*a) << "\n";
    o << "appliance   " << applianceTimeLine(j) << "\n";
  }
  if (j.warnings())
    for (const auto* w : *j.warnings()) o << "warning     " << w->str() << "\n";
  if (!str(j.last_error()).empty()) o << "error       " << str(j.last_error()) << "\n";
  if (j.env())
    for (const auto* e : *j.env())
      o << "env         " << str(e->name()) << "=" << str(e->value()) << "\n";
  return o.str();
}

namespace {

json jobObject(const fb::JobInfo* j) {
  json env = json::object();
  if (j->env())
    for (const auto* e : *j->env()) env[str(e->name())] = str(e->value());
  json devices = json::array();
  if (j->devices())
    for (const auto* d : *j->devices()) devices.push_back(d->index());
  json appliance = json::array();
  if (j->appliance_jobs())
    for (const auto* a : *j->appliance_jobs())
      appliance.push_back({{"id", str(a->id())},
                           {"state", str(a->state())},
                           {"systems", a->systems()},
                           {"created", timeText(a->created_ns())},
                           {"started", timeText(a->started_ns())},
                           {"ended", timeText(a->ended_ns())}});
  return {{"job_id", j->job_id()},
          {"user", str(j->user())},
          {"uid", j->uid()},
          {"state", fb::EnumNameJobState(j->state())},
          {"devices", devices},
          {"job_dir", str(j->job_dir())},
          {"env", env},
          {"prolog_started", timeText(j->prolog_started_ns())},
          {"ready", timeText(j->ready_ns())},
          {"appliance_jobs", appliance},
          {"appliance_seconds", j->appliance_seconds()},
          {"last_error", str(j->last_error())}};
}

}  // namespace

std::string jobJson(const fb::JobInfo& j) {
  return jobObject(&j).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string jobsJson(const std::vector<const fb::JobInfo*>& jobs) {
  json arr = json::array();
  for (const auto* j : jobs) arr.push_back(jobObject(j));
  return arr.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace accel::ctl
