#include "accel/events/event.h"

#include <type_traits>

namespace accel::event {

Priority priorityOf(const Event& event) {
  return std::holds_alternative<NodeHeartbeat>(event) || std::holds_alternative<GpuProgress>(event)
             ? Priority::kTelemetry
             : Priority::kLifecycle;
}

uint32_t jobIdOf(const Event& event) {
  return std::visit(
      [](const auto& e) -> uint32_t {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, AgentStarted> || std::is_same_v<T, NodeHeartbeat>) {
          return 0;
        } else {
          return e.job_id;
        }
      },
      event);
}

const char* kindName(const Event& event) {
  static constexpr const char* kNames[] = {
      "prolog_started",
      "prolog_finished",
      "epilog_finished",
      "agent_started",
      "task_started",
      "task_ended",
      "step_started",
      "step_ended",
      "appliance_job",
      "time_limit_warning",
      "time_limit_enforced",
      "node_heartbeat",
      "gpu_progress",
      "gpu_xid",
      "job_idle",
  };
  static_assert(std::size(kNames) == std::variant_size_v<Event>);
  return kNames[event.index()];
}

std::string stepName(uint32_t step_id) {
  // slurm.h's SLURM_INTERACTIVE_STEP, SLURM_BATCH_SCRIPT, SLURM_EXTERN_CONT
  // and SLURM_PENDING_STEP; libslurm is not linked here.
  switch (step_id) {
    case 0xfffffffa:
      return "interactive";
    case 0xfffffffb:
      return "batch";
    case 0xfffffffc:
      return "extern";
    case 0xfffffffd:
      return "TBD";
    default:
      return std::to_string(step_id);
  }
}

const char* jobResultName(JobResult result) {
  switch (result) {
    case JobResult::kOk:
      return "ok";
    case JobResult::kFailed:
      return "failed";
    case JobResult::kTimeLimit:
      return "time_limit";
    case JobResult::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

const char* applianceStateName(ApplianceState state) {
  switch (state) {
    case ApplianceState::kQueued:
      return "queued";
    case ApplianceState::kRunning:
      return "running";
    case ApplianceState::kSucceeded:
      return "succeeded";
    case ApplianceState::kFailed:
      return "failed";
    case ApplianceState::kCancelled:
      return "cancelled";
    case ApplianceState::kUnknown:
      return "unknown";
  }
  return "unknown";
}

const char* idleActionName(IdleAction action) {
  switch (action) {
    case IdleAction::kNone:
      return "none";
    case IdleAction::kNotify:
      return "notify";
    case IdleAction::kCancel:
      return "cancel";
    case IdleAction::kCancelFailed:
      return "cancel_failed";
  }
  return "unknown";
}

}  // namespace accel::event
