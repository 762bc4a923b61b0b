// Idle accelerators at the daemon's start (IdleAfter, IdleAction): the idle
// check over the node's telemetry, whose line goes into the job's output and
// whose cancel goes to slurmctld, each through a child process of this
// program (slurm_jobs.h) bounded in time.
#include <chrono>
#include <csignal>

#include "accel/agentd/daemon.h"
#include "accel/agentd/slurm_jobs.h"
#include "accel/common/log.h"

namespace accel::agentd {

void Daemon::startIdleJobs(const std::string& self) {
  if (!telemetry_ || !telemetry_->loaded()) return;  // nothing samples utilization here
  using namespace std::chrono_literals;
  IdleActions actions;
  actions.node = ctx_.node_name;
  actions.tell_job = [self](uint32_t job_id, const std::string& line, bool to_sruns) {
    return tellJobIsolated(self, job_id, line, to_sruns, 10s);
  };
  // As scancel: SIGKILL to the whole job, which slurmctld ends CANCELLED.
  actions.cancel = [self](uint32_t job_id) {
    return signalJobIsolated(self, job_id, SIGKILL, false, 10s);
  };
  actions.emit = [this](const event::Event& e) { emitEvent(e); };
  const IdlePolicy policy = idlePolicyOf(config_);
  idle_ = std::make_unique<IdleJobs>(*telemetry_, policy, std::move(actions));
  idle_->start();
  if (policy.after.count() > 0)
    log::info("start: idle accelerators: a job whose GPUs all read 0% for " +
              std::to_string(policy.after.count()) + " s is told" +
              (policy.action == AccelConfig::IdleAction::kCancel ? " and cancelled" : ""));
}

}  // namespace accel::agentd
