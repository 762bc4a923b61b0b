#pragma once
// Idle accelerators (IdleAfter, IdleAction): one thread that asks the idle
// decision (agent::IdleWatch) after every sampling interval and acts on each
// job it finds idle, once per job:
//   1. one `accel:` line into the job's output file (tell_job); with
//      IdleAction=notify, a job without one (interactive) gets it through
//      its srun or salloc;
//   2. with IdleAction=cancel, the job cancelled through slurmctld (cancel),
//      tried at most kCancelTries times; a failure is logged, never a node
//      fault, and the node is never drained for it;
//   3. a job_idle event saying what was done (emit).
// The gauge (accel_gpu_job_idle_seconds) is NodeTelemetry's and needs
// nothing here. The source is any UtilizationSource, so nothing here is
// GPU-specific. The actions may take seconds (child processes that ask
// slurmctld); they run on this thread, never on a hook's path.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accel/agent/idle_watch.h"
#include "accel/common/config.h"
#include "accel/common/result.h"
#include "accel/events/event.h"

namespace accel::agentd {

struct IdlePolicy {
  std::chrono::seconds after{0};  // 0: off
  AccelConfig::IdleAction action = AccelConfig::IdleAction::kNone;
  bool operator==(const IdlePolicy&) const = default;
};

// IdleAfter and IdleAction of accel.conf (UNLIMITED: off).
IdlePolicy idlePolicyOf(const AccelConfig& config);

struct IdleActions {
  // Appends `line` to the job's output file as the job's user; a job with
  // none (interactive) gets it, with `to_sruns`, through its srun or salloc.
  // True: the job got it; false: no file, and `to_sruns` off. Errors: it
  // could not be written or sent.
  std::function<Result<bool>(uint32_t job_id, const std::string& line, bool to_sruns)> tell_job;
  // Cancels the job through slurmctld (as scancel).
  std::function<Status(uint32_t job_id)> cancel;
  std::function<void(const event::Event&)> emit;
  // Between two tries of a cancel.
  std::chrono::milliseconds retry_wait{2000};
  std::string node;  // this node's name, for the line
};

class IdleJobs {
 public:
  static constexpr int kCancelTries = 3;

  // `source` must outlive this object.
  IdleJobs(const agent::UtilizationSource& source, IdlePolicy policy, IdleActions actions);
  ~IdleJobs();  // stop()
  IdleJobs(const IdleJobs&) = delete;
  IdleJobs& operator=(const IdleJobs&) = delete;

  // Starts the thread, which checks once every sampling interval. Once.
  void start();
  // Stops and joins it (an action under way finishes, a retry wait ends). Idempotent.
  void stop();
  // A reloaded accel.conf: applies from the next check on.
  void setPolicy(IdlePolicy policy);
  // One check and the actions it calls for, on the caller's thread (tests;
  // the thread calls it). Returns the jobs it found idle.
  std::vector<agent::IdleJob> checkOnce();

 private:
  void run();
  void act(const agent::IdleJob& job, const IdlePolicy& policy);
  event::IdleAction cancelWithRetries(uint32_t job_id);

  const agent::UtilizationSource& source_;
  IdleActions actions_;
  agent::IdleWatch watch_;  // the checking thread's (or checkOnce's caller's)
  std::mutex mu_;
  std::condition_variable wake_;
  IdlePolicy policy_;
  bool stopping_ = false;
  std::thread thread_;
};

// The words the job reads in its output, starting "accel: ".
// `node` names this node (a job on several nodes may read one line from each).
std::string idleLine(uint32_t job_id, const std::string& node, uint64_t idle_s,
                     const std::vector<uint32_t>& devices, AccelConfig::IdleAction action);

}  // namespace accel::agentd
