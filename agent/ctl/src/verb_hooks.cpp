// accelctl prolog / epilog: what slurmd runs. They read Slurm's environment,
// ask the daemon, and exit with a code slurmd acts on. Bounded by HookTimeout.
#include <unistd.h>

#include <charconv>
#include <string>

#include "accel/ctl/client.h"
#include "accel/schemas/control_generated.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;

struct HookEnv {
  uint32_t job_id = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user, node, partition, gpus;
  uint32_t ipus = 0, num_replicas = 0, ntasks = 0;
  int64_t appliance_time_sec = -1;
  int32_t appliance_signal = 0;
  uint32_t appliance_signal_lead_sec = 0;

  bool limit_from_default = false;  // the site's ApplianceTimeDefault, not the user's option

  // A job that asked for nothing of ours runs even when the agent is down; a
  // limit the site applied by default is not the job asking.
  bool asksForAccelerators() const {
    return ipus > 0 || !gpus.empty() || (appliance_time_sec >= 0 && !limit_from_default);
  }
};

// A whole non-negative number, or an error naming the variable.
template <typename T>
Result<T> number(const CliIo& io, const char* name, bool required, T fallback) {
  const char* v = io.getenv(name);
  if (v == nullptr || *v == '\0') {
    if (required) return Error(ErrorCode::kInvalidArgument, std::string(name) + " is not set (is this run by slurmd?)");
    return fallback;
  }
  T out{};
  std::string_view s(v);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || p != s.data() + s.size())
    return Error(ErrorCode::kInvalidArgument, std::string(name) + "='" + s.data() + "' is not a whole number");
  return out;
}

std::string text(const CliIo& io, const char* name) {
  const char* v = io.getenv(name);
  return v == nullptr ? "" : v;
}

// The SPANK plugin passes the job's validated options with
// spank_job_control_setenv("ACCEL_X"); slurmd hands them to the hooks as SPANK_ACCEL_X.
Result<HookEnv> readEnv(const CliIo& io, bool full) {
  HookEnv e;
  auto id = number<uint32_t>(io, "SLURM_JOB_ID", true, 0);
  ACCEL_TRY(id);
  if (*id == 0) return Error(ErrorCode::kInvalidArgument, "SLURM_JOB_ID=0 is not a job");
  e.job_id = *id;
  auto uid = number<uint32_t>(io, "SLURM_JOB_UID", full, 0);
  ACCEL_TRY(uid);
  e.uid = *uid;
  if (!full) return e;
  auto gid = number<uint32_t>(io, "SLURM_JOB_GID", false, *uid);
  ACCEL_TRY(gid);
  e.gid = *gid;
  e.user = text(io, "SLURM_JOB_USER");
  e.node = text(io, "SLURMD_NODENAME");
  e.partition = text(io, "SLURM_JOB_PARTITION");
  e.gpus = text(io, "SLURM_JOB_GPUS");
  auto ipus = number<uint32_t>(io, "SPANK_ACCEL_IPUS", false, 0);
  ACCEL_TRY(ipus);
  e.ipus = *ipus;
  auto replicas = number<uint32_t>(io, "SPANK_ACCEL_NUM_REPLICAS", false, 0);
  ACCEL_TRY(replicas);
  e.num_replicas = *replicas;
  auto ntasks = number<uint32_t>(io, "SPANK_ACCEL_NTASKS", false, 0);
  ACCEL_TRY(ntasks);
  e.ntasks = *ntasks;
  auto limit = number<int64_t>(io, "SPANK_ACCEL_APPLIANCE_TIME", false, -1);
  ACCEL_TRY(limit);
  e.appliance_time_sec = *limit;
  e.limit_from_default = text(io, "SPANK_ACCEL_APPLIANCE_TIME_SOURCE") == "default";
  auto sig = number<int32_t>(io, "SPANK_ACCEL_APPLIANCE_SIGNAL", false, 0);
  ACCEL_TRY(sig);
  e.appliance_signal = *sig;
  auto lead = number<uint32_t>(io, "SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD", false, 0);
  ACCEL_TRY(lead);
  e.appliance_signal_lead_sec = *lead;
  return e;
}

std::vector<uint8_t> prologRequest(const HookEnv& e) {
  flatbuffers::FlatBufferBuilder fbb(512);
  auto spec = fb::CreateJobSpecDirect(fbb, e.job_id, e.uid, e.gid, e.user.c_str(), e.node.c_str(), e.partition.c_str(),
                                      e.gpus.c_str(), e.ipus, e.num_replicas, e.ntasks, e.appliance_time_sec,
                                      e.appliance_signal, e.appliance_signal_lead_sec);
  fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::PrologRequest, fb::CreatePrologRequest(fbb, spec).Union()),
             fb::RequestIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<uint8_t> epilogRequest(const HookEnv& e) {
  flatbuffers::FlatBufferBuilder fbb(128);
  fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::EpilogRequest, fb::CreateEpilogRequest(fbb, e.job_id, e.uid).Union()),
             fb::RequestIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

int runHook(const char* phase, bool is_prolog, const std::vector<std::string>& args, const GlobalOptions& g,
            const CliIo& io) {
  const std::string tag = std::string("accel: ") + phase + ": ";
  if (!args.empty()) {
    io.err(tag + "takes no arguments (it reads Slurm's environment)");
    return kUsage;
  }
  auto env = readEnv(io, is_prolog);
  if (!env.ok()) { io.err(tag + env.error().message()); return kUsage; }
  const std::string job = "job " + std::to_string(env->job_id) + ": ";
  auto config = loadConfig(g, io);
  if (!config.ok()) { io.err(tag + config.error().message()); return kNodeFault; }
  auto request = is_prolog ? prologRequest(*env) : epilogRequest(*env);
  auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(config->hook_timeout);
  auto reply = callDaemon(*config, request, timeout);
  if (!reply.ok()) {
    // A job that asked for nothing of ours must not fail or drain the node
    // because the agent is down; one that did must not start without it.
    // An epilog is needed when the agent holds something of the job: its
    // record is still in the run directory (root reads it even with the
    // daemon down). Leaving it would leak what the prolog made.
    bool needed = is_prolog ? env->asksForAccelerators()
                            : ::access((config->run_dir + "/state/" + std::to_string(env->job_id) + ".json").c_str(),
                                       F_OK) == 0;
    if (!needed && reply.error().code() == ErrorCode::kUnavailable) {
      io.err(tag + job + reply.error().message() +
             (is_prolog ? "; job asked for no accelerators, continuing" : "; nothing of the job to clean, continuing"));
      return kOk;
    }
    io.err(tag + job + reply.error().message());
    return kNodeFault;
  }
  const auto* r = flatbuffers::GetRoot<fb::Reply>(reply->data());
  const std::string msg = r->message() ? r->message()->str() : "";
  switch (r->outcome()) {
    case fb::Outcome::Ok: return kOk;
    case fb::Outcome::UserError:
      io.err(tag + job + msg + " (the job fails; the node stays in service)");
      return kOk;
    case fb::Outcome::PermissionDenied: io.err(tag + job + msg); return kDenied;
    default: io.err(tag + job + msg); return kNodeFault;
  }
}

}  // namespace

int verbProlog(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  return runHook("prolog", true, args, g, io);
}

int verbEpilog(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  return runHook("epilog", false, args, g, io);
}

}  // namespace accel::ctl
