#include "accel/agentd/agent_metrics.h"

namespace accel::agentd {

AgentMetrics::AgentMetrics()
    : hooks(registry.histograms(
          "accel_hook_duration_seconds",
          "Time accel-agentd took to answer a prolog or epilog, from request to answer.", {"hook"},
          metrics::secondsBuckets())),
      prolog_seconds(hooks.with({"prolog"})),
      epilog_seconds(hooks.with({"epilog"})),
      driver_calls(registry.histograms(
          "accel_driver_call_seconds",
          "Time of each call to a vendor client (V-IPU controller, appliance), by "
          "outcome.",
          {"driver", "result"}, metrics::secondsBuckets())),
      limit_enforcements(
          registry.counter("accel_limit_enforcements",
                           "Jobs whose tasks on this node were stopped at their appliance time "
                           "limit.")) {}

void AgentMetrics::watchJobs(std::function<double()> active) {
  registry.gaugeFn("accel_jobs_active",
                   "Jobs whose prolog ran here and whose epilog has not finished.",
                   std::move(active));
}

void AgentMetrics::watchSpool(std::function<double()> events, std::function<double()> bytes) {
  registry.gaugeFn("accel_events_spooled",
                   "Job events in the node's spool not yet acknowledged by the aggregator.",
                   std::move(events));
  registry.gaugeFn("accel_spool_bytes", "Bytes of the node's event spool on disk not yet released.",
                   std::move(bytes));
}

}  // namespace accel::agentd
