#include "accel/aggregator/metrics.h"

#include <algorithm>
#include <cstdio>

#include "accel/common/clock.h"

namespace accel::aggregator {
namespace {

void counter(std::string& out, const char* name, const char* help, uint64_t v) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " +
         std::to_string(v) + "\n";
}

// Node names come from verified envelopes but are still text from afar.
std::string labelValue(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    out += c;
  }
  return out;
}

}  // namespace

const char* rejectName(Reject reason) {
  switch (reason) {
    case Reject::kFrames: return "frames";
    case Reject::kOversized: return "oversized";
    case Reject::kInvalid: return "invalid";
    case Reject::kNodeMismatch: return "node_mismatch";
    case Reject::kOutOfOrder: return "out_of_order";
    case Reject::kUnknownKey: return "unknown_key";
    case Reject::kNotOnJob: return "not_on_job";
    case Reject::kKeyRevoked: return "key_revoked";
    case Reject::kCount: break;
  }
  return "other";
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

std::string Metrics::render() const { return render(wallNs()); }

std::string Metrics::render(int64_t now_ns) const {
  std::string out;
  counter(out, "accel_aggregator_events_total", "Events accepted and committed.", events_in);
  counter(out, "accel_aggregator_duplicates_total", "Events dropped as already stored.", duplicates);
  out += "# HELP accel_aggregator_rejected_total Frames or connections refused, by reason.\n"
         "# TYPE accel_aggregator_rejected_total counter\n";
  for (size_t i = 0; i < size_t(Reject::kCount); ++i)
    out += std::string("accel_aggregator_rejected_total{reason=\"") + rejectName(Reject(i)) + "\"} " +
           std::to_string(rejected[i].load()) + "\n";
  counter(out, "accel_aggregator_unknown_kind_total", "Stored events of a kind this build cannot read.",
          unknown_kinds);
  counter(out, "accel_aggregator_batches_total", "Committed ingest transactions.", batches);
  counter(out, "accel_aggregator_commit_failures_total", "Ingest transactions that failed.", commit_failures);
  counter(out, "accel_aggregator_comment_writes_total", "AdminComment writes that succeeded.", comment_writes);
  counter(out, "accel_aggregator_comment_failures_total", "AdminComment write attempts that failed.",
          comment_failures);
  out += "# HELP accel_aggregator_comments_pending AdminComment writes waiting.\n"
         "# TYPE accel_aggregator_comments_pending gauge\naccel_aggregator_comments_pending " +
         std::to_string(comments_pending.load()) + "\n";
  out += "# HELP accel_aggregator_node_lag_seconds Receive time minus event time of the node's latest event.\n"
         "# TYPE accel_aggregator_node_lag_seconds gauge\n";
  std::lock_guard lock(mu_);
  for (const auto& [node, lag] : lag_) {
    char v[32];
    std::snprintf(v, sizeof v, "%.3f", lag);
    out += "accel_aggregator_node_lag_seconds{node=\"" + labelValue(node) + "\"} " + v + "\n";
  }
  std::map<std::string, int> states = {{"alive", 0}, {"late", 0}, {"no-heartbeat", 0}};
  for (const auto& [node, heard] : nodes_) ++states[nodeState(heard, now_ns)];
  out += "# HELP accel_aggregator_nodes Nodes heard from, by liveness: alive (an event within three of "
         "its heartbeat intervals), late, no-heartbeat (never sent one).\n"
         "# TYPE accel_aggregator_nodes gauge\n";
  for (const auto& [state, n] : states)
    out += "accel_aggregator_nodes{state=\"" + state + "\"} " + std::to_string(n) + "\n";
  return out;
}

}  // namespace accel::aggregator
