#pragma once
// The node's appliance work and its time limits, as one subsystem of
// accel-agentd. It owns these threads and joins them all in stop():
//   - the appliance watcher's poll thread (agent::ApplianceWatcher): follows
//     the appliance jobs of the jobs ready here, logs and streams each change;
//   - the limit enforcer's two threads (limit_enforcer.h): signals every
//     process of a job's steps at its limit (job_processes.h) and records
//     what it did;
//   - cancel threads: at a job's limit, one for that job cancels its
//     appliance jobs, off the enforcer's threads because an appliance call
//     may take seconds, and beside the others because it may hang.
// Surrogate steps (surrogate_steps.h) report ends on their own helper threads,
// which the SurrogateSteps object stops reporting from once it is destroyed.
//
// Without an appliance client only the limit enforcer runs: an IPU or GPU
// job's limit is its tasks' to keep.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "accel/agent/appliance_watcher.h"
#include "accel/agent/job_manager.h"
#include "accel/agent/per_job_cap.h"
#include "accel/agentd/agent_metrics.h"
#include "accel/agentd/appliance_view.h"
#include "accel/agentd/job_clock.h"
#include "accel/agentd/job_processes.h"
#include "accel/agentd/limit_enforcer.h"
#include "accel/agentd/surrogate_steps.h"
#include "accel/appliance/appliance.h"
#include "accel/common/clock.h"
#include "accel/common/config.h"
#include "accel/common/result.h"
#include "accel/events/event.h"

namespace accel::agentd {

class ApplianceService : public ApplianceView {
 public:
  struct Options {
    std::chrono::milliseconds poll_interval{1000};  // ApplianceInterval
    int64_t kill_grace_ns = 0;                      // ApplianceKillGrace
    bool surrogate_steps = false;                   // SurrogateSteps
    std::string config_path;                        // accel.conf, for the surrogate sruns
    std::string accelctl;                           // the accelctl their waiters run
    // The clock whose wall time the watcher and the enforcer read: the job
    // clock; tests give a FakeClock. Must outlive the service.
    const Clock* clock = &jobClock();
    // Without cgroup tracking, slurmctld signals the job's steps at the
    // limit (job_processes.h); unset: the registered tasks alone.
    JobProcesses::AskSlurm ask_slurm;
    // A job's processes outlived SIGKILL: a node fault (the daemon drains
    // the node); unset: only logged.
    std::function<void(uint32_t job_id, const std::string& node, const std::string& reason)>
        node_fault;
    // How long processes may take to go after SIGKILL before they count as
    // outliving it.
    std::chrono::milliseconds unkillable_after{5000};
    // Told how a limit reaches a job's processes, when that becomes known or
    // changes (JobProcesses::describe); unset: nothing.
    std::function<void(const std::string& how)> tracking_changed;
    std::string proc_root = "/proc";
  };
  using Emit = std::function<void(const event::Event&)>;

  // `client` null: the node has no appliance. `manager`, `metrics` and the
  // sink behind `emit` must outlive the service.
  ApplianceService(agent::JobManager& manager, std::shared_ptr<appliance::ApplianceClient> client,
                   AgentMetrics& metrics, Emit emit, Options options);
  ~ApplianceService() override;  // stop()

  // After the job manager recovered: adopts the surrogate steps a previous
  // daemon started, starts the watcher and the enforcer (which acts at once
  // on a deadline that passed while no daemon ran).
  Status start();
  // Joins every thread; idempotent. The watcher's thread stops first (it
  // feeds the others), then the enforcer, the surrogate steps and the cancels.
  void stop();

  // For the control handler (ApplianceView); any thread.
  bool hasAppliance() const { return client_ != nullptr; }
  std::vector<appliance::ApplianceJob> jobsOf(uint32_t job_id) const override;
  double secondsOf(uint32_t job_id) const override;
  void jobsChanged() override;
  void surrogateStarted(const std::string& appliance_job) override;
  // Whether one more event of the job's appliance work may be streamed
  // (agent::kMaxApplianceEventsPerJob); said once in the log when not.
  bool eventAllowed(uint32_t job_id);
  // A job's budget changed (JobManager's budget listener); before start(): nothing.
  void rearmLimits();
  // How a limit reaches a job's processes here, for `accelctl status`.
  std::string processTracking() const;

 private:
  std::vector<agent::LiveJob> liveJobs();
  void changed(const appliance::ApplianceJob& job);
  void maybeSurrogate(const appliance::ApplianceJob& job);
  void surrogateEnded(const SurrogateSpec& spec, int wait_status);
  void adoptSurrogates();
  struct Cancel {
    uint32_t job_id;
    uid_t uid;  // the job's user, whose appliance jobs alone are cancelled
    std::string user;
  };
  void queueCancel(uint32_t job_id);
  void cancelJobsOf(const Cancel& c);
  void reapCancelsLocked();
  void killFollowUp(const agent::JobRecord& rec, agent::LimitAction action, int sig);

  agent::JobManager& manager_;
  std::shared_ptr<appliance::ApplianceClient> client_;
  AgentMetrics& metrics_;
  Emit emit_;
  Options options_;

  // Events of each job's appliance work (appliance job changes, surrogate steps).
  agent::PerJobCap events_{agent::kMaxApplianceEventsPerJob};
  std::mutex surrogate_mu_;
  std::set<std::string> surrogate_started_;  // appliance jobs whose step's waiter reported

  // stop() ends their threads in the order they call each other, and
  // destroys the watcher last: the others poke it.
  std::unique_ptr<agent::ApplianceWatcher> watcher_;
  std::unique_ptr<SurrogateSteps> surrogates_;
  std::unique_ptr<JobProcesses> processes_;  // the enforcer's; made in the constructor
  std::unique_ptr<LimitEnforcer> limits_;

  // One thread per job being cancelled, so that one job's hung appliance
  // call (bounded by ApplianceTimeout) never holds up another's. Finished
  // ones are joined when the next starts; stop() joins the rest.
  struct CancelThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex cancel_mu_;
  std::vector<CancelThread> cancels_;
  bool cancel_stop_ = false;
};

}  // namespace accel::agentd
