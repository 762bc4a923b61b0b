#pragma once
// Enforces appliance time limits on the node. One thread waits on a
// CLOCK_REALTIME timerfd armed, absolutely, at the earliest pending action of
// any job (warning, enforcement, SIGKILL after the grace); it is re-armed
// whenever a budget changes (appliance job or step starts or stops) and
// after every action. The thread does nothing else, so a slow request,
// appliance call or status update never delays a signal.
//
// Actions, each taken once and persisted in the job record before the next:
//   warn     the job's --appliance-signal to its tasks; TimeLimitWarning
//   enforce  SIGTERM to its tasks, its appliance jobs cancelled (off this
//            thread); TimeLimitEnforced
//   kill     SIGKILL to the tasks still there after the grace
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "accel/agent/job_manager.h"
#include "accel/common/result.h"
#include "accel/events/event.h"

namespace accel::agentd {

struct EnforcerActions {
  // Signals tasks, returns how many were reached.
  std::function<int(const std::vector<agent::TaskRef>& tasks, int sig)> signal_tasks;
  // Starts cancelling the job's appliance jobs and returns at once; unset:
  // the node has no appliance.
  std::function<void(uint32_t job_id)> cancel_appliance;
  std::function<void(const event::Event&)> emit;
  std::function<int64_t()> now;  // CLOCK_REALTIME ns
};

class LimitEnforcer {
 public:
  LimitEnforcer(agent::JobManager& manager, int64_t grace_ns, EnforcerActions actions);
  ~LimitEnforcer();  // stops the thread

  // Makes the timer and starts the thread; acts at once on anything overdue
  // (a deadline that passed while the daemon was down).
  Status start();
  // Recomputes the earliest pending action. Any thread.
  void rearm();

 private:
  void run();
  void actOnDue();
  void act(const agent::JobRecord& rec, agent::LimitAction action, int64_t now);

  agent::JobManager& manager_;
  int64_t grace_ns_;
  EnforcerActions actions_;
  int timer_fd_ = -1;
  int stop_fd_ = -1;
  std::mutex arm_mu_;  // serializes computing and setting the timer
  std::thread thread_;
};

}  // namespace accel::agentd
