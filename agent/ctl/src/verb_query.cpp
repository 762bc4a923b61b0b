// accelctl status / jobs / job ID: read-only verbs for people. Tables for a
// terminal, JSON with --json. Any user may run them.
#include <charconv>
#include <ctime>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "accel/common/clock.h"
#include "accel/ctl/client.h"
#include "accel/ctl/hints.h"
#include "accel/ctl/status_view.h"
#include "accel/ipc/control_requests.h"
#include "accel/schemas/control_generated.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;
using nlohmann::json;

std::string str(const flatbuffers::String* s) { return s ? s->str() : ""; }

json jobJson(const fb::JobInfo* j) {
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

// Calls the daemon and returns the reply, or prints why not and what to do
// about it, and sets `code`.
const fb::Reply* ask(const GlobalOptions& g, const CliIo& io, const std::vector<uint8_t>& req,
                     std::vector<uint8_t>* storage, int* code) {
  auto path = configPath(g, io);
  auto config = path.ok() ? loadAccelConfig(*path) : Result<AccelConfig>(path.error());
  if (!config.ok()) {
    io.err("accelctl: " + configErrorHint(config.error()));
    *code = kUsage;
    return nullptr;
  }
  auto reply = callDaemon(*config, req, config->hook_timeout);
  if (!reply.ok()) {
    io.err("accelctl: " + callErrorHint(reply.error(), config->control_socket, *path));
    *code = exitForCallError(reply.error());
    return nullptr;
  }
  *storage = std::move(*reply);
  const auto* r = flatbuffers::GetRoot<fb::Reply>(storage->data());
  if (r->outcome() != fb::Outcome::Ok) {
    *code = r->outcome() == fb::Outcome::NotFound           ? kNotFound
            : r->outcome() == fb::Outcome::PermissionDenied ? kDenied
                                                            : kNodeFault;
    io.err("accelctl: " +
           (*code == kNotFound ? unknownJobHint(str(r->message())) : str(r->message())));
    return nullptr;
  }
  return r;
}

void printJobsTable(const std::vector<const fb::JobInfo*>& jobs, const CliIo& io) {
  if (jobs.empty()) {
    io.out("no jobs on this node\n");
    return;
  }
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %-12s %-8s %-20s %s\n", "JOBID", "USER", "STATE", "READY",
                "DEVICES");
  o << line;
  for (const auto* j : jobs) {
    std::string devs;
    if (j->env())
      for (const auto* e : *j->env())
        if (str(e->name()) == "ACCEL_DEVICES") devs = str(e->value());
    std::snprintf(line, sizeof line, "%-10u %-12s %-8s %-20s %s\n", j->job_id(),
                  str(j->user()).c_str(), fb::EnumNameJobState(j->state()),
                  timeText(j->ready_ns()).c_str(), devs.empty() ? "-" : devs.c_str());
    o << line;
  }
  io.out(o.str());
}

}  // namespace

int verbStatus(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  if (!args.empty()) {
    io.err("accelctl: status takes no arguments; usage: accelctl status [--json]");
    return kUsage;
  }
  std::vector<uint8_t> buf;
  int code = kOk;
  const auto* r = ask(g, io, ipc::encodeStatusRequest(), &buf, &code);
  if (r == nullptr) return code;
  const auto* s = r->body_as_StatusInfo();
  if (s == nullptr) {
    io.err("accelctl: the daemon sent no status");
    return kNodeFault;
  }
  io.out(g.json ? statusJson(*s, wallNs()) : statusTable(*s, wallNs()));
  return kOk;
}

int verbJobs(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  if (!args.empty()) {
    io.err("accelctl: jobs takes no arguments (see: accelctl job ID)");
    return kUsage;
  }
  std::vector<uint8_t> buf;
  int code = kOk;
  const auto* r = ask(g, io, ipc::encodeJobsRequest(), &buf, &code);
  if (r == nullptr) return code;
  std::vector<const fb::JobInfo*> jobs;
  if (const auto* l = r->body_as_JobList(); l && l->jobs())
    for (const auto* j : *l->jobs()) jobs.push_back(j);
  if (g.json) {
    json arr = json::array();
    for (const auto* j : jobs) arr.push_back(jobJson(j));
    io.out(arr.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
    return kOk;
  }
  printJobsTable(jobs, io);
  return kOk;
}

int verbJob(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  uint32_t id = 0;
  if (args.size() != 1 ||
      std::from_chars(args[0].data(), args[0].data() + args[0].size(), id).ptr !=
          args[0].data() + args[0].size() ||
      id == 0) {
    io.err("accelctl: job needs one job id, e.g. accelctl job 42");
    return kUsage;
  }
  std::vector<uint8_t> buf;
  int code = kOk;
  const auto* r = ask(g, io, ipc::encodeJobRequest(id), &buf, &code);
  if (r == nullptr) return code;
  const auto* j = r->body_as_JobInfo();
  if (j == nullptr) {
    io.err("accelctl: the daemon sent no job");
    return kNodeFault;
  }
  if (g.json) {
    io.out(jobJson(j).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
    return kOk;
  }
  std::ostringstream o;
  auto js = jobJson(j);
  o << "job         " << j->job_id() << " (" << str(j->user()) << ")\n"
    << "state       " << js["state"].get<std::string>() << "\n"
    << "ready       " << js["ready"].get<std::string>() << "\n"
    << "directory   " << (str(j->job_dir()).empty() ? "-" : str(j->job_dir())) << "\n";
  if (!str(j->last_error()).empty()) o << "error       " << str(j->last_error()) << "\n";
  for (auto& [k, v] : js["env"].items())
    o << "env         " << k << "=" << v.get<std::string>() << "\n";
  io.out(o.str());
  return kOk;
}

}  // namespace accel::ctl
