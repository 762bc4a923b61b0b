#pragma once
// Turns one control request into one reply. Pure with respect to the
// transport: tests call it with literal buffers and a chosen caller.
//
// Who may do what (caller identity comes from SO_PEERCRED):
//   prolog, epilog        root or the configured SlurmUser
//   task, step reports    root or SlurmUser (slurmstepd, privileged callbacks)
//   status                anyone
//   jobs, job ID          anyone, but a user sees only its own jobs;
//                         root and SlurmUser see every job
//   surrogate report      the job's owner (the waiter in its surrogate step)
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accel/agent/job_manager.h"
#include "accel/agentd/agent_metrics.h"
#include "accel/agentd/appliance_view.h"
#include "accel/agentd/events_call.h"
#include "accel/agentd/job_events.h"
#include "accel/agentd/node_drain.h"
#include "accel/agentd/node_health.h"
#include "accel/appliance/appliance.h"

namespace accel::agentd {

class NodeTelemetry;

struct Caller {
  uid_t uid = 0;
  pid_t pid = 0;
};

// What the handlers reach, each by its own type; built once by the daemon
// (Daemon::makeHandlerContext), faked member by member in tests. Null or
// unset: the node has none, and the handlers do without.
class XidMonitor;

struct HandlerContext {
  agent::JobManager* manager = nullptr;
  // The hooks' durations go here; null: not measured.
  AgentMetrics* metrics = nullptr;
  uid_t slurm_uid = 0;  // SlurmUser's uid (root is always allowed)
  std::string node_name;
  std::string version;
  std::string config_path;
  int64_t started_ns = 0;
  // Where job events go, and the stream's state for `accelctl status`; null:
  // nowhere, and no stream is shown.
  JobEvents* events = nullptr;
  // What the earlier runs of a requeued job used of its appliance time limit
  // (ns), for ApplianceTimeOnRequeue=cumulative; unset: each run starts
  // fresh. Called before the prolog of a run after the first; bounded.
  std::function<Result<int64_t>(uint32_t job_id)> earlier_runs_used_ns;
  // The node's appliance work; null: the node reads no appliance.
  ApplianceView* appliance = nullptr;
  // For `accelctl status`: config, vendor calls and node faults with their
  // time (null: not shown). Node faults answered to a hook are noted here.
  NodeHealth* health = nullptr;
  // Drains this node in Slurm for a configuration fault a prolog found
  // (agent::KindFault), once per job, without waiting; null: the node is not
  // drained and the job merely fails.
  NodeDrainer* drainer = nullptr;
  // AggregatorQueryAddress is set: an EventsRequest goes to the event relay
  // (Dispatched::relay); unset: it is answered with how to read the events.
  bool relay_events = false;
  // GPU telemetry (node_telemetry.h): the prolog registers a job's GPUs, the
  // epilog puts its figures in EpilogFinished; null: none, status says so
  // only when the daemon sets one that is not loaded.
  NodeTelemetry* telemetry = nullptr;
  // GPU Xids from the kernel log (gpu_xids.h): the hardware faults `accelctl
  // status` shows and `accelctl clear-fault` forgets; null: none read.
  XidMonitor* xids = nullptr;
};

// What to do with one request: send `reply`, or, for an EventsRequest when
// ctx.relay_events is set, hand the connection to the event relay with
// `relay` (reply then empty).
struct Dispatched {
  std::vector<uint8_t> reply;
  std::optional<EventsCall> relay;
};

// Verifies the request once, then answers it from the request table (kind ->
// who may ask, handler, and for the hooks their duration metric). Never
// fails: a malformed request gets a BadRequest reply.
Dispatched dispatchRequest(const HandlerContext& ctx, const Caller& caller,
                           std::span<const uint8_t> request);

// dispatchRequest's reply, for callers without a relay (tests, fuzzing).
std::vector<uint8_t> handleRequest(const HandlerContext& ctx, const Caller& caller,
                                   std::span<const uint8_t> request);

// Builds a BadRequest/Busy reply with a message (for the transport layer).
std::vector<uint8_t> errorReply(uint8_t outcome, const std::string& message);

}  // namespace accel::agentd
