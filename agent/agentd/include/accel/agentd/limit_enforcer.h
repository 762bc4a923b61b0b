#pragma once
// Enforces appliance time limits on the node. One thread waits on a
// CLOCK_BOOTTIME timerfd armed for the time from now, on
// EnforcerActions::clock (the job clock), to the earliest pending action of
// any job (warning, enforcement, SIGKILL after the grace), so a step of the
// wall clock moves no deadline; it is re-armed whenever a budget or a job's
// tasks change and after every action. That thread only signals; a second
// thread records each action in the job record, streams its event, logs it
// and starts cancelling appliance jobs, so a slow disk, spool or appliance
// client never delays a signal.
//
// Actions, each taken once (also across a restart: it is persisted):
//   warn     the job's --appliance-signal to every process of its steps but
//            the batch step, or with B: to its batch shell; TimeLimitWarning
//   enforce  SIGTERM to every process of its steps, its appliance jobs
//            cancelled (off this thread; by the job's leader only,
//            job_nodes.h); TimeLimitEnforced
//   kill     SIGKILL to whatever is left after the grace; a process still
//            there after that is a node fault (the node is drained)
// What "every process" is, and how it is reached, is job_processes.h's.
// The waiters of surrogate steps (tasks of the steps the job record lists)
// get neither the warning nor SIGTERM: the cancel ends them, FAILED.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "accel/agent/job_manager.h"
#include "accel/agentd/job_clock.h"
#include "accel/common/clock.h"
#include "accel/common/result.h"
#include "accel/events/event.h"

namespace accel::agentd {

// The tasks an action signals: all of them for kKill; for the warning and
// SIGTERM, all but those of the steps the record spares (agent::sparedSteps,
// at most kMaxSurrogateStepsPerJob); for the warning, of those only the
// batch shell (B:) or only the others.
std::vector<agent::TaskRef> tasksToSignal(const agent::JobRecord& rec, agent::LimitAction action);

struct EnforcerActions {
  // Signals the job's processes for an action (job_processes.h: every
  // process of its steps where the node tracks them in cgroups, else
  // tasksToSignal) and returns how many were reached, or a negative number
  // when the signal goes out later, from follow_up (through slurmctld). Only
  // signals: it runs on the limit thread.
  std::function<int(const agent::JobRecord& rec, agent::LimitAction action, int sig)> signal_job;
  // What may take time after an action (asking slurmctld, waiting for the
  // processes to go after SIGKILL), on the reporter thread; unset: nothing.
  std::function<void(const agent::JobRecord& rec, agent::LimitAction action, int sig)> follow_up;
  // Told the jobs ready here at every re-arm, while their tasks run (where
  // the job's processes are is found then); unset: nothing.
  std::function<void(const std::vector<agent::JobRecord>& ready)> observe;
  // Starts cancelling the job's appliance jobs and returns at once; unset:
  // the node has no appliance.
  std::function<void(uint32_t job_id)> cancel_appliance;
  std::function<void(const event::Event&)> emit;
  // Deadlines are this clock's wall time: the job clock, which does not
  // step. Must outlive the enforcer.
  const Clock* clock = &jobClock();
};

class LimitEnforcer {
 public:
  LimitEnforcer(agent::JobManager& manager, int64_t grace_ns, EnforcerActions actions);
  ~LimitEnforcer();  // stops the thread

  // Makes the timer and starts the thread; acts at once on anything overdue
  // (a deadline that passed while the daemon was down).
  Status start();
  // Recomputes the earliest pending action. Any thread, also after stop()
  // (it then arms a timer nobody waits on).
  void rearm();
  // Joins both threads; what was taken is still recorded. Idempotent; the
  // destructor calls it.
  void stop();

 private:
  struct Taken {
    agent::JobRecord rec;
    agent::LimitAction action;
    int64_t at_ns;
    int sig;
    int reached;      // processes signalled
    int64_t late_ns;  // the signals went out this long after the action was due
  };
  void run();
  void actOnDue();
  void report(const Taken& taken);
  void reportLoop();
  void overlayLocked(agent::JobRecord& rec) const;
  void armLocked();

  agent::JobManager& manager_;
  int64_t grace_ns_;
  EnforcerActions actions_;
  int timer_fd_ = -1;
  int stop_fd_ = -1;
  std::atomic<uint64_t> read_gen_{0};  // orders concurrent re-arms
  uint64_t installed_gen_ = 0;         // under arm_mu_
  std::mutex arm_mu_;                  // guards pending_, marks_ and setting the timer
  // Jobs with a pending action, as of the last re-arm. Task reports re-arm
  // too (through the manager's listener), so the snapshot names every task.
  std::vector<agent::JobRecord> pending_;
  struct Mark {
    int64_t ready_ns = 0;  // which run of the job (a requeued job keeps its id)
    agent::ApplianceBudget taken;
  };
  std::map<uint32_t, Mark> marks_;  // actions taken, by job

  std::mutex report_mu_;  // guards reports_ and stopping_
  std::condition_variable report_cv_;
  std::deque<Taken> reports_;
  bool stopping_ = false;
  std::thread reporter_;
  std::thread thread_;
};

}  // namespace accel::agentd
