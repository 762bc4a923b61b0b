#include "accel/aggregator/metrics.h"

#include <cstdio>

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

std::string Metrics::render() const {
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
  return out;
}

}  // namespace accel::aggregator
