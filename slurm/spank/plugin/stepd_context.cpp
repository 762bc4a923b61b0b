#include "stepd_context.h"

#include <slurm/slurm.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "accel/common/proc_stat.h"
#include "accel/ipc/control_requests.h"
#include "accel/spank/daemon_client.h"
#include "accel/spank/daemon_messages.h"
#include "accel/spank/site_config.h"
#include "accel/spank/step_logic.h"
#include "plugin_state.h"

namespace accel::spank::stepd {
namespace {

struct StepState {
  std::uint32_t job_id = 0;
  std::uint32_t step_id = 0;
  std::optional<std::string> socket;                     // where accel-agentd listens
  std::optional<std::string> socket_problem;             // why that is unknown
  std::string asked;                                     // see describeAsk(); empty: nothing
  std::optional<std::string> refusal;                    // the tasks fail with this
  bool daemon_timed_out = false;                         // do not make every task wait again
  std::vector<std::pair<std::string, std::string>> env;  // what the daemon gave the tasks
  std::vector<std::string> warnings;                     // for the job's output
  int exit_code = 0;
};

StepState& step() {
  static StepState s;
  return s;
}

bool isExternStep() { return step().step_id == SLURM_EXTERN_CONT; }

std::string jobTag() { return "job " + std::to_string(step().job_id) + ": "; }

// One bounded call. After a timeout the daemon is taken as hung for the rest
// of this step, so N tasks do not wait N times; a refused connection is cheap
// and is tried again.
Result<DaemonReply> ask(const std::vector<std::uint8_t>& request) {
  StepState& s = step();
  if (!s.socket)
    return Error(ErrorCode::kUnavailable, s.socket_problem.value_or("no control socket"));
  if (s.daemon_timed_out)
    return Error(ErrorCode::kTimeout, "accel-agentd did not answer earlier in this step");
  auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(state().args.timeout);
  auto reply = callDaemon(*s.socket, request, timeout);
  if (!reply.ok() && reply.error().code() == ErrorCode::kTimeout) s.daemon_timed_out = true;
  return reply;
}

// A report (step or task) the daemon keeps for the job's time limit. Failing
// it never stops the job: the tasks already run. Users hear of it only when
// the job asked for accel-agent.
void report(const char* what, const std::vector<std::uint8_t>& request) {
  auto reply = ask(request);
  std::string problem;
  if (!reply.ok())
    problem = reply.error().message();
  else if (reply->outcome == Outcome::kNotFound || reply->outcome == Outcome::kOk)
    return;
  else
    problem = std::string(outcomeName(reply->outcome)) +
              (reply->message.empty() ? "" : ": " + reply->message);
  std::string line = jobTag() + what + " not reported to accel-agentd: " + problem;
  if (step().asked.empty())
    reportDebug(line);
  else
    reportError(line);
}

void findSocket() {
  StepState& s = step();
  auto paths = locateConfig(state().args, std::getenv("SLURM_CONF"));
  Result<std::string> socket = paths.ok() ? controlSocketPath(state().args, *paths) : paths.error();
  if (socket.ok())
    s.socket = *socket;
  else
    s.socket_problem = socket.error().message();
}

std::string jobGpus(spank_t sp) {
  char buf[1024] = "";
  return spank_getenv(sp, "SLURM_JOB_GPUS", buf, sizeof(buf)) == ESPANK_SUCCESS ? std::string(buf)
                                                                                : "";
}

}  // namespace

int init(spank_t sp, int argc, char** argv) {
  StepState& s = step();
  bool args_ok = parseArgs(argc, argv);
  // Options forwarded by srun or sbatch are matched against registered ones,
  // so registration happens even when the arguments are bad.
  if (registerOptions(sp) != 0) reportDebug("options not registered in slurmstepd");
  if (spank_get_item(sp, S_JOB_ID, &s.job_id) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_STEPID, &s.step_id) != ESPANK_SUCCESS) {
    s.refusal = "slurmstepd did not give the job and step ids";
    return 0;
  }
  if (!args_ok) {
    s.refusal = *state().args_error;
    return 0;
  }
  findSocket();
  if (s.socket)
    report("step start",
           ipc::encodeStepRequest(s.job_id, s.step_id, ipc::StepEventKind::kStarted, 0));
  return 0;
}

int initPostOpt(spank_t sp) {
  StepState& s = step();
  // Options are known from here on: those given to this srun, or forwarded
  // from sbatch/salloc through the job's environment.
  s.asked = describeAsk(state().raw, jobGpus(sp));
  if (!s.refusal && !s.socket && !s.asked.empty())
    s.refusal = jobTag() +
                "cannot find accel-agentd: " + s.socket_problem.value_or("unknown socket") +
                "; the job asked for " + s.asked + " and cannot run without it";
  else if (!s.socket)
    reportDebug(jobTag() +
                "cannot find accel-agentd: " + s.socket_problem.value_or("unknown socket"));
  return 0;
}

int userInit(spank_t sp) {
  StepState& s = step();
  // The extern step runs no tasks of the user: nothing to prepare.
  if (s.refusal || !s.socket || isExternStep()) return 0;
  // Privileges are dropped here: the daemon sees the job's user and answers
  // for that user's own job only.
  StepDecision d = decideStep(s.job_id, s.asked, ask(ipc::encodeJobRequest(s.job_id)));
  if (d.note) reportDebug(*d.note);
  if (d.refusal) {
    s.refusal = *d.refusal;
    return 0;
  }
  s.env = d.env;
  s.warnings = d.warnings;
  for (const auto& [name, value] : d.env) {
    spank_err_t rc = spank_setenv(sp, name.c_str(), value.c_str(), 1);
    if (rc != ESPANK_SUCCESS) {
      s.refusal = jobTag() + "cannot set " + name + " for the tasks: " + spank_strerror(rc);
      return 0;
    }
  }
  return 0;
}

int taskInit(spank_t sp) {
  // In the forked task, as the user, just before exec: the one place where
  // failing ends the job without draining the node, and where the message
  // reaches the job's own output (srun's terminal, the batch output file).
  if (step().refusal) {
    reportError(*step().refusal);
    return -1;
  }
  // Each task of a multi-GCD IPU job gets its own GCD's IPUoF file.
  int local_id = 0;  // S_TASK_ID is an int
  if (spank_get_item(sp, S_TASK_ID, &local_id) != ESPANK_SUCCESS || local_id < 0) return 0;
  // Once per step and node: the output of its first task here.
  if (local_id == 0)
    for (const auto& line : step().warnings) reportError(jobTag() + line);
  std::string path = ipuofConfigForTask(step().env, static_cast<std::uint32_t>(local_id));
  if (!path.empty()) spank_setenv(sp, "IPUOF_CONFIG_PATH", path.c_str(), 1);
  return 0;
}

int taskPostFork(spank_t sp) {
  StepState& s = step();
  if (s.refusal || !s.socket) return 0;
  pid_t pid = 0;
  if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || pid <= 0) {
    reportDebug(jobTag() + "no pid for a forked task");
    return 0;
  }
  // The task has not exec'd yet (slurmstepd releases tasks only after every
  // post_fork), so its start time is read before it can exit.
  auto ticks = readStartTicks(pid);
  if (!ticks.ok()) {
    reportDebug(jobTag() + "task " + std::to_string(pid) + ": " + ticks.error().message());
    return 0;
  }
  report("task start",
         ipc::encodeTaskRequest(s.job_id, s.step_id, pid, *ticks, ipc::TaskEventKind::kStarted, 0));
  return 0;
}

int taskExit(spank_t sp) {
  StepState& s = step();
  int status = 0;
  pid_t pid = 0;
  if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) == ESPANK_SUCCESS)
    s.exit_code = foldExitCode(s.exit_code, status);
  if (s.refusal || !s.socket) return 0;
  if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || pid <= 0) return 0;
  report("task exit",
         ipc::encodeTaskRequest(s.job_id, s.step_id, pid, 0, ipc::TaskEventKind::kExited, status));
  return 0;
}

int exit(spank_t /*sp*/) {
  StepState& s = step();
  // A refused step ran nothing; the daemon either cannot be reached or keeps
  // no live record of the job, so a report would only add noise to the log.
  if (!s.socket || s.refusal) return 0;
  report("step end",
         ipc::encodeStepRequest(s.job_id, s.step_id, ipc::StepEventKind::kEnded, s.exit_code));
  return 0;
}

}  // namespace accel::spank::stepd
