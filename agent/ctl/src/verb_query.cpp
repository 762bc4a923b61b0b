// accelctl status / jobs / job ID: read-only verbs for people. Tables for a
// terminal, JSON with --json. Any user may run them.
#include <charconv>

#include "accel/common/clock.h"
#include "accel/ctl/client.h"
#include "accel/ctl/hints.h"
#include "accel/ctl/job_view.h"
#include "accel/ctl/status_view.h"
#include "accel/ipc/control_requests.h"
#include "accel/schemas/control_generated.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;

std::string str(const flatbuffers::String* s) { return s ? s->str() : ""; }

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
  io.out(g.json ? jobsJson(jobs) : jobsTable(jobs));
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
  io.out(g.json ? jobJson(*j) : jobText(*j));
  return kOk;
}

// Root and SlurmUser only (the agent refuses others): forgets the node's GPU
// hardware faults once an operator has looked at the GPU.
int verbClearFault(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  if (!args.empty()) {
    io.err("accelctl: clear-fault takes no arguments; usage: accelctl clear-fault");
    return kUsage;
  }
  std::vector<uint8_t> buf;
  int code = kOk;
  const auto* r = ask(g, io, ipc::encodeClearFaultRequest(), &buf, &code);
  if (r == nullptr) return code;
  io.out(str(r->message()) +
         "; resume the node in Slurm yourself once the GPU is fine "
         "(scontrol update nodename=NODE state=resume)\n");
  return kOk;
}

}  // namespace accel::ctl
