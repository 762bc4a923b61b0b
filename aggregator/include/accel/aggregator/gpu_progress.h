#pragma once
// A running job's GPU figures as the aggregator keeps them: for each node,
// the latest GpuProgress event it sent (cumulative figures from the job's
// prolog up to that node's latest sample). Each replaces the one before;
// nothing is ever added up. `accelctl report` reads them while the node's
// epilog is not in; after it, the epilog's figures (JobSummary::gpu) count
// and only the idle time is taken from here. Kept in the job's stored state,
// never written into AdminComment.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "accel/events/event.h"

namespace accel::aggregator {

struct LiveGpu {
  int64_t received_ns = 0;  // when the latest progress arrived (CLOCK_REALTIME); 0: not known
  uint64_t idle_s = 0;      // every GPU of the job at 0% for this long, as the node last said
  uint64_t samples = 0;     // the node's samples of the job so far
  std::vector<event::GpuDeviceFigures> devices;  // by device index, at most kMaxDevices
  bool operator==(const LiveGpu&) const = default;
};

// node -> its latest progress.
using LiveGpuUse = std::map<std::string, LiveGpu>;

// Takes `node`'s progress in place of the one before. Returns whether
// anything changed.
bool mergeProgress(LiveGpuUse& live, const std::string& node, const event::GpuProgress& progress,
                   int64_t received_ns);

// The state's form; liveFromState throws nlohmann::json::exception on a
// wrong shape, as the other state readers do.
nlohmann::json liveToState(const LiveGpuUse& live);
LiveGpuUse liveFromState(const nlohmann::json& j);

}  // namespace accel::aggregator
