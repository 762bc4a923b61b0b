#pragma once
// Entry points of accel-aggregatord's verbs; main() only dispatches.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accel/aggregator/config.h"
#include "accel/aggregator/store.h"

namespace accel::aggregator {

// The daemon: returns the process exit status.
int runDaemon(const AggregatorConfig& config);

struct EventsQuery {
  std::string database;
  std::optional<uint32_t> job_id;
  std::optional<std::string> node;
  bool follow = false;
  bool json = false;
};

// `events`: prints the stored record read-only, oldest first; with follow,
// keeps printing new events until interrupted. Returns the exit status.
int runEvents(const EventsQuery& query);

struct NodesQuery {
  std::string database;
  bool json = false;
};

// `nodes`: every node the aggregator has heard from, with its state, read-only.
int runNodes(const NodesQuery& query);

}  // namespace accel::aggregator
