#pragma once
// One job's record across all of its nodes, merged from their events.
// Merging is order-insensitive where it can be (sets, maxima, the worst
// result), so events of different nodes may arrive interleaved in any order.
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "accel/common/result.h"
#include "accel/events/event.h"

namespace accel::aggregator {

struct JobSummary {
  uint32_t job_id = 0;
  event::JobResult result = event::JobResult::kOk;
  std::string accel_kind;  // "gpu", "ipu", "appliance", "mixed"; empty: none
  uint32_t accel_count = 0;  // devices over all nodes
  std::string partition;
  std::set<std::string> nodes;        // nodes that reported the job
  std::set<std::string> epilog_nodes;  // nodes whose epilog finished
  std::set<std::string> cleanup_failed;  // nodes whose epilog could not release everything
  uint32_t node_count = 0;  // from the prolog; 0: unknown
  std::map<std::string, uint64_t> appliance_s;  // node -> appliance seconds used
  uint64_t appliance_limit_s = 0;
  std::set<uint32_t> surrogate_steps;
  bool operator==(const JobSummary&) const = default;

  uint64_t applianceSeconds() const;
  // Every node's epilog is in (all node_count of them; with an unknown
  // count, at least one).
  bool complete() const;
};

// Folds one event from `node` into `summary` (whose job_id is the event's).
// False when the event cannot have changed the summary (task events, say),
// so the caller need not store it again.
bool mergeEvent(JobSummary& summary, const std::string& node, const event::Event& ev);

// The internal state, for the store (round-trips every field).
std::string toStateJson(const JobSummary& summary);
Result<JobSummary> fromStateJson(const std::string& text);

// What goes into AdminComment after "accel=": compact JSON with format
// version "v" (docs/accounting-format.md). Never contains '|' (sacct -P's
// separator) or a newline.
std::string toCommentJson(const JobSummary& summary);

}  // namespace accel::aggregator
