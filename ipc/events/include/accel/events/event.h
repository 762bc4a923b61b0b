#pragma once
// Job events as plain C++ values (namespace accel::event; the generated
// FlatBuffers types keep accel::events): what accel-agentd emits and what
// accel-aggregatord reads back. One struct per kind, all in one variant, so a
// caller publishes an event in one expression without touching FlatBuffers:
//
//   outbox.publish(event::PrologFinished{.job_id = 42, .devices = {"ipu0"}});
//
// Field meanings follow schemas/events.fbs; a field left at its initial value
// is sent as the schema's default.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace accel::event {

// In the order of the schema's enums (the values are the wire values).
enum class JobResult : uint8_t { kOk = 0, kFailed, kTimeLimit, kCancelled };
enum class Priority : uint8_t { kLifecycle = 0, kTelemetry };
enum class ApplianceState : uint8_t {
  kQueued = 0,
  kRunning,
  kSucceeded,
  kFailed,
  kCancelled,
  kUnknown
};

struct PrologStarted {
  uint32_t job_id = 0;
  uint32_t uid = 0;
  std::string user{};
  std::string node_list{};     // SLURM_NODELIST
  uint32_t node_count = 0;     // 0: unknown (the summary is then written after the first epilog)
  uint32_t restart_count = 0;  // runs before this one (the job was requeued)
  bool operator==(const PrologStarted&) const = default;
};

struct PrologFinished {
  uint32_t job_id = 0;
  JobResult result = JobResult::kOk;
  std::vector<std::string> devices{};
  std::string partition{};
  uint64_t duration_us = 0;
  std::string message{};
  std::string accel_kind{};  // "gpu", "ipu", "appliance"; empty: none
  uint64_t appliance_limit_s = 0;
  bool limit_unmeasured = false;  // a limit nothing on the node can measure
  bool operator==(const PrologFinished&) const = default;
};

// What a job did with one GPU of the node (schemas/events.fbs,
// GpuDeviceFigures); unset: never read.
struct GpuDeviceFigures {
  uint32_t index = 0;
  std::string pci_bus_id{};
  std::string uuid{};
  uint64_t samples = 0;
  float util_mean_pct = 0;
  uint32_t util_max_pct = 0;
  std::optional<uint64_t> memory_used_max_mib{};
  std::optional<double> energy_j{};
  bool operator==(const GpuDeviceFigures&) const = default;
};

struct GpuProcessFigures {
  uint32_t pid = 0;
  uint32_t device_index = 0;
  std::optional<uint64_t> memory_max_mib{};
  bool operator==(const GpuProcessFigures&) const = default;
};

// A job's GPU figures on one node. The codec keeps the schema's bounds:
// kMaxDevices devices and kMaxProcesses processes, the rest counted.
struct GpuFigures {
  static constexpr size_t kMaxDevices = 16;
  static constexpr size_t kMaxProcesses = 64;
  uint64_t samples = 0;
  std::vector<GpuDeviceFigures> devices{};
  std::vector<GpuProcessFigures> processes{};
  uint32_t processes_left_out = 0;
  bool operator==(const GpuFigures&) const = default;
};

struct EpilogFinished {
  uint32_t job_id = 0;
  JobResult result = JobResult::kOk;
  uint64_t duration_us = 0;
  std::string message{};
  bool cleanup_ok = true;
  uint64_t appliance_seconds = 0;
  uint32_t restart_count = 0;       // the run this epilog ends
  std::optional<GpuFigures> gpu{};  // unset: no GPU figures (no NVML, or no GPU of the job)
  bool operator==(const EpilogFinished&) const = default;
};

struct AgentStarted {
  std::string version{};
  uint32_t jobs_recovered = 0;
  bool operator==(const AgentStarted&) const = default;
};

struct TaskStarted {
  uint32_t job_id = 0, step_id = 0, task_id = 0;
  int32_t pid = 0;
  bool operator==(const TaskStarted&) const = default;
};

struct TaskEnded {
  uint32_t job_id = 0, step_id = 0, task_id = 0;
  int32_t exit_code = 0;
  bool operator==(const TaskEnded&) const = default;
};

struct StepStarted {
  uint32_t job_id = 0, step_id = 0;
  std::string name{};
  bool surrogate = false;
  bool operator==(const StepStarted&) const = default;
};

struct StepEnded {
  uint32_t job_id = 0, step_id = 0;
  int32_t exit_code = 0;
  bool operator==(const StepEnded&) const = default;
};

struct ApplianceJobChanged {
  uint32_t job_id = 0;
  std::string appliance_job{};
  ApplianceState state = ApplianceState::kQueued;
  uint32_t csx_count = 0;
  uint64_t seconds_used = 0;  // cumulative for the Slurm job
  bool operator==(const ApplianceJobChanged&) const = default;
};

struct TimeLimitWarning {
  uint32_t job_id = 0;
  uint64_t limit_s = 0, remaining_s = 0;
  bool operator==(const TimeLimitWarning&) const = default;
};

struct TimeLimitEnforced {
  uint32_t job_id = 0;
  uint64_t limit_s = 0, used_s = 0;
  bool operator==(const TimeLimitEnforced&) const = default;
};

struct NodeHeartbeat {
  uint32_t accelerators = 0, accelerators_busy = 0;
  std::string accel_kind{};
  uint32_t jobs = 0;
  uint64_t backlog = 0;
  uint32_t interval_s = 0;  // when the next one is due
  bool operator==(const NodeHeartbeat&) const = default;
};

// A running job's GPU figures on this node so far (schemas/events.fbs,
// GpuProgress): cumulative, the latest replaces the one before.
struct GpuProgress {
  uint32_t job_id = 0;
  uint64_t idle_s = 0;  // every GPU of the job at 0% for this long, up to now
  GpuFigures gpu{};
  bool operator==(const GpuProgress&) const = default;
};

// An Xid of NVIDIA's driver on a GPU the job held here (schemas/events.fbs,
// GpuXid); `gpu_class` is "application", "hardware" or "other".
struct GpuXid {
  static constexpr size_t kMaxText = 256;
  uint32_t job_id = 0;
  uint32_t code = 0;
  std::string gpu_class{};
  std::string pci_bus_id{};
  int32_t gpu = -1;  // index among the node's GPUs; -1: not known
  uint32_t pid = 0;  // 0: not given
  std::string text{};
  bool drained = false;
  bool operator==(const GpuXid&) const = default;
};

// Every GPU of the job on this node read 0% for IdleAfter (schemas/events.fbs,
// JobIdle): once per job and node, with what the agent did about it.
enum class IdleAction : uint8_t { kNone = 0, kNotify, kCancel, kCancelFailed };

struct JobIdle {
  static constexpr size_t kMaxDevices = 16;
  uint32_t job_id = 0;
  uint64_t idle_s = 0;
  std::vector<uint32_t> devices{};
  IdleAction action = IdleAction::kNone;
  bool told_job = false;  // the accel: line reached the job's output file
  bool operator==(const JobIdle&) const = default;
};

// Alternatives in the order of the schema's union (index + 1 is the wire tag).
using Event = std::variant<PrologStarted, PrologFinished, EpilogFinished, AgentStarted, TaskStarted,
                           TaskEnded, StepStarted, StepEnded, ApplianceJobChanged, TimeLimitWarning,
                           TimeLimitEnforced, NodeHeartbeat, GpuProgress, GpuXid, JobIdle>;

// Heartbeats and GPU progress are telemetry (droppable); everything else is
// lifecycle.
Priority priorityOf(const Event& event);

// The job an event belongs to; 0 for node-wide events.
uint32_t jobIdOf(const Event& event);

// Stable lower-case names: "prolog_started", ..., "node_heartbeat".
const char* kindName(const Event& event);
const char* jobResultName(JobResult result);
const char* applianceStateName(ApplianceState state);
// "none", "notify", "cancel", "cancel_failed".
const char* idleActionName(IdleAction action);

// A step id as Slurm names it to people (sacct, squeue, its logs): "batch",
// "extern", "interactive", "TBD" (a step not yet numbered: its special ids
// in slurm.h), and any other as its number, e.g. "0".
std::string stepName(uint32_t step_id);

}  // namespace accel::event
