#pragma once
// The node's job table: what the prolog and epilog hooks ask of the daemon.
// Thread-safe: prologs of different jobs run at once (slurmd does that);
// calls for the same job are serialized. Every state change is persisted
// before the call returns, so a restarted daemon re-adopts the same jobs.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "accel/agent/inventory.h"
#include "accel/agent/job_locks.h"
#include "accel/agent/job_record.h"
#include "accel/agent/job_step.h"
#include "accel/agent/job_store.h"
#include "accel/common/clock.h"
#include "accel/common/result.h"

namespace accel::agent {

struct ManagerStats {
  size_t jobs = 0;
  size_t devices_total = 0;
  size_t devices_in_use = 0;
  std::vector<std::string> last_errors;  // newest last, at most kMaxErrors
};

// One accelerator of the node and the job that holds it (0: free).
struct DeviceUse {
  uint32_t index = 0;
  std::string name;  // e.g. cuda0
  std::string kind;  // gpu, ipu, other
  uint32_t job_id = 0;
  std::string pci_bus_id;  // the topology's, empty when none (GPU telemetry finds it by this)
};

// A job recovery brought to its end: a half-done prolog undone or a
// half-done epilog finished. The hook that was running saw the daemon go
// and no later hook reports it, so the daemon tells the event stream.
struct RecoveredEnd {
  uint32_t job_id = 0;
  bool rolled_back = false;  // true: a prolog undone; false: an epilog finished
  int64_t appliance_used_ns = 0;
  bool time_limit = false;     // the job had been stopped at its appliance limit
  uint32_t restart_count = 0;  // the run of the job (SLURM_JOB_RESTART_COUNT)
};

struct RecoverySummary {
  size_t adopted = 0;               // jobs found ready or failed, kept as they were
  size_t rolled_back = 0;           // half-done prologs undone
  size_t cleaned = 0;               // half-done epilogs finished
  std::vector<RecoveredEnd> ended;  // the jobs of rolled_back and cleaned
  std::vector<std::string> problems;
};

// The limit a job runs under, from its request and the site's grace.
LimitPolicy limitPolicy(const JobRequestSpec& spec, int64_t grace_ns);

// A job that asks for a kind of accelerator this node does not have at all
// (an IPU job on a node with neither a V-IPU controller nor IPUs of its own).
// Neither the user's mistake nor a fault of the node: the cluster's
// configuration sends the job here (a Slurm partition that mixes kinds).
struct KindFault {
  // For the job: its record's last error, its output, its events. Starts
  // "this node (NAME) has no V-IPU controller ...".
  std::string message;
  // For the operators, one line: "job 42 asked for IPUs but this node has
  // no V-IPU controller (...); check the Slurm partition's nodes".
  std::string fault;
  // Slurm's reason for draining the node: "accel: " and the fault.
  std::string drainReason() const { return "accel: " + fault; }
};

class JobManager {
 public:
  static constexpr size_t kMaxErrors = 10;

  // The job times (prolog start, ready, budgets) are `clock`'s wall time;
  // `clock` must outlive the manager.
  JobManager(JobStore store, Inventory inventory, std::vector<std::unique_ptr<JobStep>> steps,
             const Clock& clock);

  // Loads persisted records and brings each to a stable phase.
  Result<RecoverySummary> recover();

  // Makes the job ready. Idempotent: a ready job is returned as it is; a
  // prolog retried after a partial failure rolls the old attempt back first.
  // Errors: kConflict (Slurm's GPUs held by another job: the node's view
  // and Slurm's disagree), kInvalidArgument (the request can never be met on
  // this node: the job fails, the node stays up), anything a step returns.
  // A prolog that failed and undid its work leaves a failed record holding
  // nothing, saying why, for the epilog to remove.
  Result<JobRecord> prolog(const JobRequestSpec& spec);

  // Removes everything of the job. An unknown job, or a job already cleaned,
  // is success (its deterministic resources are removed anyway).
  Status epilog(uint32_t job_id);

  // Task and step reports from the SPANK plugin. A report for a job that
  // has no record here (it asked for nothing, or the prolog failed) is
  // ignored: kNotFound. Reports are idempotent.
  Status taskStarted(uint32_t job_id, const TaskRef& task);
  Status taskExited(uint32_t job_id, int32_t pid);
  Status stepStarted(uint32_t job_id, uint32_t step_id);
  Status stepEnded(uint32_t job_id, uint32_t step_id);

  // Appliance time. A job's local steps count while it holds devices; its
  // appliance jobs count as the appliance reports them. kNotFound for a job
  // without a live record. Every change is persisted, then the budget
  // listener is called (outside the manager's locks).
  Status applianceJobSeen(uint32_t job_id, const appliance::ApplianceJob& job);
  // Records that a limit action was taken at `at_ns`, so that it is never
  // repeated, also after a restart.
  Status limitActionTaken(uint32_t job_id, LimitAction action, int64_t at_ns);
  // True the first time it is asked for this appliance job of a live job
  // (persisted: a restarted daemon never makes a second surrogate step for
  // it), false after. kNotFound for a job without a live record;
  // kConflict once the job has kMaxSurrogateStepsPerJob of them.
  Result<bool> claimSurrogate(uint32_t job_id, const std::string& appliance_job);
  // Notes a step that stands for an appliance job: the limit's warning
  // signal is for the job's own tasks, never for the waiter in such a step.
  // The waiter reports it, as the job's user: a job has at most
  // kMaxSurrogateStepsPerJob such steps (kConflict past that).
  Status surrogateStepStarted(uint32_t job_id, uint32_t step_id);
  // Called whenever a budget changed in a way that may move a deadline, and
  // when a job's tasks or surrogate steps changed (whom a limit action signals). Set it before
  // any other call; it may call back into the manager.
  void setBudgetListener(std::function<void()> listener) { budget_listener_ = std::move(listener); }

  std::optional<JobRecord> job(uint32_t job_id) const;
  std::vector<JobRecord> jobs() const;
  ManagerStats stats() const;
  std::vector<DeviceUse> deviceUse() const;
  void replaceInventory(Inventory inventory);
  std::string inventorySource() const;

  // Tells the manager that this node has no V-IPU controller, and how that
  // is known (e.g. "no vipu.conf beside /etc/slurm/accel.conf"). Unset (the
  // default), IPUs may come from a controller the steps talk to. Call before
  // the first prolog.
  void setNoIpuController(std::string why);
  // Why this node can never give the job what it asks for, or nullopt. A
  // prolog for such a job fails with kInvalidArgument and the fault's message.
  std::optional<KindFault> kindFault(const JobRequestSpec& spec) const;

 private:
  Result<std::vector<uint32_t>> chooseDevices(const JobRequestSpec& spec);
  std::optional<KindFault> kindFaultLocked(const JobRequestSpec& spec) const;
  Status runSetUp(JobRecord& rec, size_t* done);
  Status runTearDown(const JobRecord& rec, size_t from);
  Status saveLocked(const JobRecord& rec);
  template <typename F>
  Status changeLive(uint32_t job_id, F change);
  void noteErrorLocked(const std::string& message);
  void keepFailedLocked(JobRecord rec, const Error& why);
  void deviceEnvLocked(JobRecord& rec) const;
  static void limitEnv(JobRecord& rec);

  JobStore store_;
  std::vector<std::unique_ptr<JobStep>> steps_;
  const Clock& clock_;
  std::function<void()> budget_listener_;

  mutable std::mutex mu_;  // guards everything below
  Inventory inventory_;
  std::map<uint32_t, JobRecord> records_;
  std::set<uint32_t> held_;
  std::deque<std::string> errors_;
  std::string no_ipu_controller_;  // why there is none; empty: there may be one
  // Calls for one job are serialized; calls for different jobs never wait
  // for each other.
  JobLocks job_locks_;
};

}  // namespace accel::agent
