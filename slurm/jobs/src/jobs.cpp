#include "accel/slurm/jobs.h"

#include <slurm/slurm_errno.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <utility>

#include "accel/slurm/slurm_compat.h"

namespace accel::slurm {

using agentd::JobPresence;

namespace {

// libslurm keeps process-wide state (its config, the auth plugin): one call at a time.
std::mutex& slurmMutex() {
  static std::mutex mu;
  return mu;
}

void initSlurm() {
  static std::once_flag init;
  std::call_once(init, [] { slurm_init(nullptr); });
}

// Loads one job from slurmctld and hands it to `use` (under the lock, before
// the message is freed). kNotFound for a job slurmctld does not know,
// kUnavailable when it cannot answer.
template <typename F>
auto withJob(uint32_t job_id, F use)
    -> Result<decltype(use(std::declval<const slurm_job_info_t&>()))> {
  std::lock_guard<std::mutex> g(slurmMutex());
  initSlurm();
  job_info_msg_t* msg = nullptr;
  if (slurm_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS) {
    int err = errno;
    ErrorCode code = err == ESLURM_INVALID_JOB_ID ? ErrorCode::kNotFound : ErrorCode::kUnavailable;
    return Error(code, "slurmctld: job " + std::to_string(job_id) + ": " + slurm_strerror(err));
  }
  if (msg == nullptr || msg->record_count == 0) {
    slurm_free_job_info_msg(msg);
    return Error(ErrorCode::kNotFound, "slurmctld: job " + std::to_string(job_id) + " not found");
  }
  auto out = use(msg->job_array[0]);
  slurm_free_job_info_msg(msg);
  return out;
}

}  // namespace

JobPresence presenceFromState(uint32_t job_state) {
  if ((job_state & JOB_COMPLETING) != 0) return JobPresence::kAlive;
  switch (job_state & JOB_STATE_BASE) {
    case JOB_RUNNING:
    case JOB_SUSPENDED:
      return JobPresence::kAlive;
    default:
      // Pending again (requeued) or ended: nothing of it runs here any more.
      return JobPresence::kGone;
  }
}

Result<JobPresence> LibslurmSlurmctld::jobPresence(uint32_t job_id) {
  auto p =
      withJob(job_id, [](const slurm_job_info_t& j) { return presenceFromState(j.job_state); });
  if (!p.ok() && p.error().code() == ErrorCode::kNotFound) return JobPresence::kUnknown;
  return p;
}

Status LibslurmSlurmctld::drainNode(const std::string& node, const std::string& reason) {
  std::lock_guard<std::mutex> g(slurmMutex());
  initSlurm();
  update_node_msg_t msg;
  slurm_init_update_node_msg(&msg);
  std::string names = node;
  std::string why = reason;
  msg.node_names = names.data();
  msg.node_state = NODE_STATE_DRAIN;
  msg.reason = why.data();
  msg.reason_uid = getuid();
  if (slurm_update_node(&msg) == SLURM_SUCCESS) return okStatus();
  int err = errno;
  ErrorCode code = err == ESLURM_INVALID_NODE_NAME ? ErrorCode::kNotFound
                   : err == ESLURM_USER_ID_MISSING || err == ESLURM_ACCESS_DENIED
                       ? ErrorCode::kPermissionDenied
                       : ErrorCode::kUnavailable;
  return Error(code, "slurmctld: drain " + node + ": " + slurm_strerror(err));
}

Status LibslurmSlurmctld::signalJob(uint32_t job_id, int sig, bool steps_only) {
  std::lock_guard<std::mutex> g(slurmMutex());
  initSlurm();
  const uint16_t flags = steps_only ? KILL_STEPS_ONLY : KILL_FULL_JOB;
  if (slurm_kill_job(job_id, static_cast<uint16_t>(sig), flags) == SLURM_SUCCESS) return okStatus();
  int err = errno;
  ErrorCode code = err == ESLURM_INVALID_JOB_ID || err == ESLURM_ALREADY_DONE
                       ? ErrorCode::kNotFound
                       : ErrorCode::kUnavailable;
  return Error(code, "slurmctld: signal " + std::to_string(sig) + " to job " +
                         std::to_string(job_id) + ": " + slurm_strerror(err));
}

Result<agentd::JobOutput> LibslurmSlurmctld::jobOutput(uint32_t job_id) {
  return withJob(job_id, [](const slurm_job_info_t& j) {
    agentd::JobOutput out{.uid = j.user_id, .gid = j.group_id, .path = {}};
    // Only a batch job has a file of its own; Slurm names none for others.
    if (j.batch_flag == 0) return out;
    char buf[4096] = {};
    slurm_get_job_stderr(buf, sizeof(buf), const_cast<slurm_job_info_t*>(&j));
    out.path = buf;
    if (!out.path.empty() && out.path.front() != '/') {
      // Relative to the job's working directory, as slurmd opens it.
      if (j.work_dir == nullptr || j.work_dir[0] != '/') return agentd::JobOutput{};
      out.path = std::string(j.work_dir) + "/" + out.path;
    }
    return out;
  });
}

Status LibslurmSlurmctld::notifyJob(uint32_t job_id, const std::string& text) {
  std::lock_guard<std::mutex> g(slurmMutex());
  initSlurm();
  std::string message = text;
  if (slurm_notify_job(job_id, message.data()) == SLURM_SUCCESS) return okStatus();
  int err = errno;
  ErrorCode code = err == ESLURM_INVALID_JOB_ID || err == ESLURM_ALREADY_DONE
                       ? ErrorCode::kNotFound
                       : ErrorCode::kUnavailable;
  return Error(code,
               "slurmctld: notify job " + std::to_string(job_id) + ": " + slurm_strerror(err));
}

}  // namespace accel::slurm
