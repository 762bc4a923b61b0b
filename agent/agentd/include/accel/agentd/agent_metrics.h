#pragma once
// What accel-agentd serves to Prometheus on MetricsAddress (off unless set):
// the hooks' durations, the jobs it holds, its event spool, the time of its
// calls to vendor clients and its appliance limit enforcements. The names
// are the ones docs/operator-guide.md lists and systemd/accel-alerts.yml uses.
#include <functional>

#include "accel/common/metrics.h"

namespace accel::agentd {

struct AgentMetrics {
  AgentMetrics();
  metrics::Registry registry;
  // accel_hook_duration_seconds{hook="prolog"|"epilog"}: from the request's
  // arrival to its answer.
  metrics::Family<metrics::Histogram>& hooks;
  // Its two members, found once: the hooks observe them with no lookup.
  metrics::Histogram& prolog_seconds;
  metrics::Histogram& epilog_seconds;
  // accel_driver_call_seconds{driver="vipu"|"appliance", result="ok"|"error"}.
  metrics::Family<metrics::Histogram>& driver_calls;
  // accel_limit_enforcements_total: jobs whose tasks were stopped at their
  // appliance time limit on this node.
  metrics::Counter& limit_enforcements;

  // Sources read at each scrape, on the endpoint's thread: each must be
  // thread-safe. Unset: the gauge reads 0.
  void watchJobs(std::function<double()> active);  // accel_jobs_active
  void watchSpool(std::function<double()> events,
                  std::function<double()> bytes);  // accel_events_spooled, accel_spool_bytes
};

}  // namespace accel::agentd
