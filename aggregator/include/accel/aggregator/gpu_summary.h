#pragma once
// What a job did with its GPUs, as its summary keeps it: each node's figures
// per device from that node's epilog (EpilogFinished::gpu), the latest run's.
// Kept in the stored state in full and written into AdminComment compactly
// (docs/accounting-format.md, "gpu").
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "accel/events/event.h"

namespace accel::aggregator {

// node -> its devices' figures, by device index.
using GpuUse = std::map<std::string, std::vector<event::GpuDeviceFigures>>;

// Takes `node`'s figures from its epilog; a later epilog of the node (its
// next run, or a resend) replaces them. Returns whether anything changed.
bool mergeGpu(GpuUse& use, const std::string& node, const event::GpuFigures& figures);

// The state's form: every field, unknown ones as -1. gpuFromState throws
// nlohmann::json::exception on a wrong shape, as the other state readers do.
nlohmann::json gpuToState(const GpuUse& use);
GpuUse gpuFromState(const nlohmann::json& j);

// The comment's form: {"node": [[index, util mean %, util max %, memory max
// MiB, energy J, samples], ...]}, whole numbers, -1 where unknown. About 26
// bytes a device.
nlohmann::ordered_json gpuToComment(const GpuUse& use);

}  // namespace accel::aggregator
