#include "accel/aggregator/metrics.h"

#include <algorithm>
#include <cerrno>

#include "accel/common/clock.h"

namespace accel::aggregator {

const char* rejectName(Reject reason) {
  switch (reason) {
    case Reject::kFrames:
      return "frames";
    case Reject::kOversized:
      return "oversized";
    case Reject::kInvalid:
      return "invalid";
    case Reject::kNodeMismatch:
      return "node_mismatch";
    case Reject::kOutOfOrder:
      return "out_of_order";
    case Reject::kUnknownKey:
      return "unknown_key";
    case Reject::kNotOnJob:
      return "not_on_job";
    case Reject::kKeyRevoked:
      return "key_revoked";
    case Reject::kDeferred:
      return "deferred";
    case Reject::kAddressLimit:
      return "address_limit";
    case Reject::kCount:
      break;
  }
  return "other";
}

const char* acceptFailureName(AcceptFailure reason) {
  switch (reason) {
    case AcceptFailure::kEmfile:
      return "emfile";
    case AcceptFailure::kEnfile:
      return "enfile";
    case AcceptFailure::kOther:
    case AcceptFailure::kCount:
      break;
  }
  return "other";
}

void Metrics::acceptFailed(int err) {
  auto reason = err == EMFILE   ? AcceptFailure::kEmfile
                : err == ENFILE ? AcceptFailure::kEnfile
                                : AcceptFailure::kOther;
  ++accept_failures[size_t(reason)];
}

void Metrics::setLag(const std::string& node, double seconds) {
  std::lock_guard lock(mu_);
  lag_[node] = seconds;
}

void Metrics::noteNode(const std::string& node, const NodeHeard& heard) {
  std::lock_guard lock(mu_);
  NodeHeard& known = nodes_[node];
  known.last_event_ns = std::max(known.last_event_ns, heard.last_event_ns);
  if (heard.heartbeat) {
    known.heartbeat = heard.heartbeat;
    known.heartbeat_ns = heard.heartbeat_ns;
  }
}

std::string Metrics::render(metrics::Format format) const { return render(wallNs(), format); }

// A registry made afresh at each scrape from the counters: one text format
// for both daemons (accel/common/metrics.h). Scrapes are seconds apart.
std::string Metrics::render(int64_t now_ns, metrics::Format format) const {
  metrics::Registry r;
  r.counter("accel_aggregator_events", "Events accepted and committed.").add(events_in);
  r.counter("accel_aggregator_duplicates", "Events dropped as already stored.").add(duplicates);
  auto& refused = r.counters("accel_aggregator_rejected",
                             "Frames or connections refused, by reason.", {"reason"});
  for (size_t i = 0; i < size_t(Reject::kCount); ++i)
    refused.with({rejectName(Reject(i))}).add(rejected[i]);
  r.counter("accel_aggregator_unknown_kind", "Stored events of a kind this build cannot read.")
      .add(unknown_kinds);
  r.counter("accel_aggregator_batches", "Committed ingest transactions.").add(batches);
  r.counter("accel_aggregator_commit_failures", "Ingest transactions that failed.")
      .add(commit_failures);
  r.counter("accel_aggregator_comment_writes", "AdminComment writes that succeeded.")
      .add(comment_writes);
  r.counter("accel_aggregator_comment_failures", "AdminComment write attempts that failed.")
      .add(comment_failures);
  r.counter("accel_aggregator_comment_waits",
            "AdminComment writes put off because slurmdbd had not yet recorded the job's end.")
      .add(comment_waits);
  r.gauge("accel_aggregator_pending_comments",
          "Job summaries waiting to be written into Slurm accounting.")
      .set(double(comments_pending.load()));
  r.gauge("accel_aggregator_nodes_connected",
          "Connections from nodes open now (accepted and not yet closed; one per node that is "
          "linked).")
      .set(double(connections.load()));
  r.gauge("accel_aggregator_held_jobs",
          "Jobs whose events of a new run are held until slurmctld confirms the run.")
      .set(double(held_jobs.load()));
  r.counter("accel_aggregator_runs_unconfirmed",
            "Held events dropped, never counted: slurmctld did not confirm their run.")
      .add(runs_unconfirmed);
  r.counter("accel_aggregator_reused_job_ids",
            "Job ids given to a new job (MaxJobId wrapped, slurmctld's state lost): the earlier "
            "job's summary was archived and the new job began its own.")
      .add(reused_job_ids);
  r.counter("accel_aggregator_slurmctld_failures",
            "Lookups of a job's current run that slurmctld did not answer (retried).")
      .add(slurmctld_failures);
  auto& accepts =
      r.counters("accel_aggregator_accept_failures",
                 "Connections the aggregator could not accept, by cause: emfile (its descriptor "
                 "limit, LimitNOFILE), enfile (the system's), other.",
                 {"reason"});
  for (size_t i = 0; i < size_t(AcceptFailure::kCount); ++i)
    accepts.with({acceptFailureName(AcceptFailure(i))}).add(accept_failures[i]);
  std::map<std::string, double> lag;
  std::map<std::string, NodeHeard> nodes;
  {
    std::lock_guard lock(mu_);
    lag = lag_;
    nodes = nodes_;
  }
  if (before_format) before_format();
  double worst = 0;
  for (const auto& [node, l] : lag) worst = std::max(worst, l);
  r.gauge("accel_aggregator_lag_seconds",
          "The largest node lag: receive time minus event time of a node's latest event, over all "
          "nodes.")
      .set(worst);
  auto& lags = r.gauges("accel_aggregator_node_lag_seconds",
                        "Receive time minus event time of the node's latest event.", {"node"});
  for (const auto& [node, l] : lag) lags.with({node}).set(l);
  auto& states =
      r.gauges("accel_aggregator_nodes",
               "Nodes heard from, by liveness: alive (an event within three of its heartbeat "
               "intervals), late, no-heartbeat (never sent one).",
               {"state"});
  for (const char* state : {"alive", "late", "no-heartbeat"}) states.with({state});
  for (const auto& [node, heard] : nodes) {
    auto& g = states.with({nodeState(heard, now_ns)});
    g.set(g.value() + 1);
  }
  return r.render(format);
}

}  // namespace accel::aggregator
