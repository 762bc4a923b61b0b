// accelctl prolog / epilog: what slurmd runs. They read Slurm's environment,
// ask the daemon, and exit with a code slurmd acts on. Bounded by HookTimeout.
#include <unistd.h>

#include <string>

#include "accel/ctl/client.h"
#include "accel/ctl/hook_env.h"
#include "accel/schemas/control_generated.h"
#include "accel/spank/job_env.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;

int runHook(const char* phase, bool is_prolog, const std::vector<std::string>& args,
            const GlobalOptions& g, const CliIo& io) {
  const std::string tag = std::string("accel: ") + phase + ": ";
  if (!args.empty()) {
    io.err(tag + "takes no arguments (it reads Slurm's environment)");
    return kUsage;
  }
  auto env = readHookEnv(io, is_prolog);
  if (!env.ok()) {
    io.err(tag + env.error().message());
    return kUsage;
  }
  const std::string job = "job " + std::to_string(env->job_id) + ": ";
  for (const auto& note : env->notes) io.err(tag + job + note);
  auto path = configPath(g, io);
  auto config = path.ok() ? loadAccelConfig(*path) : Result<AccelConfig>(path.error());
  if (!config.ok()) {
    io.err(tag + config.error().message());
    return kNodeFault;
  }
  if (is_prolog) {
    // vipu.conf is read only for a job that names IPUs.
    const bool ipus = io.getenv("SPANK_ACCEL_IPUS") != nullptr;
    readJobOptions(io, spank::nodeSiteLimits(*config, *path, ipus), *env);
  }
  auto request = is_prolog ? prologRequest(*env) : epilogRequest(*env);
  auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(config->hook_timeout);
  auto reply = callDaemon(*config, request, timeout);
  if (!reply.ok()) {
    // A job that asked for nothing of ours must not fail or drain the node
    // because the agent is down; one that did must not start without it.
    // An epilog is needed when the agent holds something of the job: its
    // record is still in the run directory (root reads it even with the
    // daemon down). Leaving it would leak what the prolog made.
    bool needed =
        is_prolog
            ? env->asksForAccelerators()
            : ::access(
                  (config->run_dir + "/state/" + std::to_string(env->job_id) + ".json").c_str(),
                  F_OK) == 0;
    if (!needed && reply.error().code() == ErrorCode::kUnavailable) {
      const std::string why =
          !is_prolog             ? "; nothing of the job to clean, continuing"
          : env->refusal.empty() ? "; job asked for no accelerators, continuing"
                                 : "; " + env->refusal + "; the job continues without accelerators";
      io.err(tag + job + reply.error().message() + why);
      return kOk;
    }
    io.err(tag + job + reply.error().message());
    return kNodeFault;
  }
  const auto* r = flatbuffers::GetRoot<fb::Reply>(reply->data());
  const std::string msg = r->message() ? r->message()->str() : "";
  switch (r->outcome()) {
    case fb::Outcome::Ok:
      return kOk;
    case fb::Outcome::UserError:
      // Either way Slurm is not to drain the node for "Prolog error": after
      // a user's mistake it stays in service; after a configuration fault
      // the agent drains it itself, with a reason that names the fault.
      io.err(tag + job + msg +
             (r->drains_node()
                  ? " (the job fails; accel-agentd drains this node: a configuration fault)"
                  : " (the job fails; the node stays in service)"));
      return kOk;
    case fb::Outcome::PermissionDenied:
      io.err(tag + job + msg);
      return kDenied;
    default:
      io.err(tag + job + msg);
      return kNodeFault;
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
