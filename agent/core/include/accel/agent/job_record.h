#pragma once
// Everything the agent knows about one job on this node, and its persistent
// form. The record is what a restarted daemon re-adopts, so it holds every
// resource the prolog made (devices, directory) and not only what was asked.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "accel/agent/appliance_budget.h"
#include "accel/agent/lifecycle.h"
#include "accel/common/result.h"

namespace accel::agent {

// What Slurm and the SPANK options ask for this job.
struct JobRequestSpec {
  uint32_t job_id = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;
  std::string partition;      // Slurm partition
  std::string gpus;           // SLURM_JOB_GPUS, e.g. "0,2"; empty if none
  uint32_t ipus = 0;          // --ipus
  uint32_t num_replicas = 0;  // --num-replicas
  uint32_t ntasks = 0;        // tasks on this node
  int64_t appliance_time_sec = -1;
  int32_t appliance_signal = 0;
  uint32_t appliance_signal_lead_sec = 0;
  // --appliance-signal=B:SIG: the warning goes to the batch shell alone
  // (tasks of kBatchStepId); otherwise to the tasks of every other step.
  bool appliance_signal_batch = false;
  // The job's nodes (see job_nodes.h): this node's Slurm name (SLURMD_NODENAME,
  // else the host name), the job's compact host list (SLURM_NODELIST; empty:
  // unknown) and its node count (0: unknown).
  std::string node;
  std::string node_list;
  uint32_t node_count = 0;
  // Runs of the job before this one (SLURM_JOB_RESTART_COUNT): a requeued
  // job's next run is a new record here, with a fresh appliance budget.
  uint32_t restart_count = 0;
  // Not from the hook: set by the daemon before the prolog of a later run
  // when the budget is cumulative (ApplianceTimeOnRequeue). carried_ns: what
  // the earlier runs used (it seeds the record's budget); carry_note: why it
  // could not be read, for the job's output (empty when it was).
  int64_t carried_ns = 0;
  std::string carry_note;
  // Why the hook refused the job's options (SPANK_ACCEL_*); empty: not
  // refused. A refused job fails as a user's mistake. Not persisted: the
  // failed record keeps it as its last error.
  std::string refusal;
};

// The longest node list a job may carry. Below the 64 KiB caps of a control
// request and of an event envelope, so that both still fit with it.
inline constexpr size_t kMaxNodeListBytes = size_t{60} * 1024;
// The longest refusal a job may carry (printable text).
inline constexpr size_t kMaxRefusalBytes = 1024;

// A task of the job on this node, as slurmstepd reported it. start_ticks
// (field 22 of /proc/PID/stat) tells the task from a later process that
// happens to get the same pid.
// Slurm's step id of the batch shell (SLURM_BATCH_SCRIPT), as slurmstepd
// reports it for the batch step's one task.
inline constexpr uint32_t kBatchStepId = 0xfffffffb;

struct TaskRef {
  uint32_t step_id = 0;
  int32_t pid = 0;
  uint64_t start_ticks = 0;
};

struct JobRecord {
  JobRequestSpec spec;
  JobPhase phase = JobPhase::kNone;
  std::vector<uint32_t> devices;  // accelerator indexes held (topology order)
  std::string job_dir;            // per-job directory, empty if none made
  std::string ipu_partition;      // the job's V-IPU partition (made here only on its
                                  // leader), empty if none
  std::vector<std::pair<std::string, std::string>> env;  // for the tasks
  int64_t prolog_started_ns = 0;                         // CLOCK_REALTIME
  int64_t ready_ns = 0;
  std::string last_error;
  std::vector<TaskRef> tasks;             // running tasks on this node
  std::vector<uint32_t> steps;            // running steps on this node
  ApplianceBudget budget;                 // appliance time used, limit actions taken
  std::vector<std::string> surrogates;    // appliance jobs given a surrogate step
  std::vector<uint32_t> surrogate_steps;  // their steps, as the waiters reported them
};

// Whether this node can run the clock of `spec`'s appliance limit: it reads
// an appliance (`node_has_appliance`), or the job holds IPUs of an IPU-POD or
// local devices here (their steps run the clock). True for a job without a
// limit: there is nothing to measure.
bool limitMeasurable(const JobRequestSpec& spec, const std::vector<uint32_t>& devices,
                     bool node_has_appliance);

// Surrogate steps one job is given at most: each is an srun and a thread
// here, and each spares a step from the limit's warning and SIGTERM.
inline constexpr size_t kMaxSurrogateStepsPerJob = 64;

// The steps a limit's warning and SIGTERM spare: the reported surrogate
// steps, the first kMaxSurrogateStepsPerJob of them (whatever an older
// record holds). The waiters report them as the job's user, and the agent
// does not check that a reported step is one it made (a site may turn
// surrogate steps off and users run the waiter themselves); the cap bounds
// how much of a job can be kept from the warning and SIGTERM (never from
// SIGKILL after the grace).
std::vector<uint32_t> sparedSteps(const JobRecord& record);

// JSON text of a record (stable keys; unknown keys are ignored on read so a
// newer daemon can read an older record and the reverse; a key added since the
// first version reads as its default when missing; a record of a format
// other than 1 is refused). The rules for changing it: schemas/README.md.
std::string encodeRecord(const JobRecord& record);
Result<JobRecord> decodeRecord(std::string_view text);

}  // namespace accel::agent
