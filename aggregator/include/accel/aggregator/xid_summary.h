#pragma once
// The Xids a job met on its GPUs, as its summary keeps them: one entry per
// node, GPU and code (a GPU that repeats a code adds nothing), from the
// nodes' GpuXid events. Kept in the stored state and written into
// AdminComment as "xid" (docs/accounting-format.md).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>

#include "accel/events/event.h"

namespace accel::aggregator {

struct XidEntry {
  std::string node;
  int32_t gpu = -1;  // the GPU's index on that node; -1: not known
  uint32_t code = 0;
  bool hardware = false;
  auto operator<=>(const XidEntry& o) const {
    return std::tie(node, gpu, code) <=> std::tie(o.node, o.gpu, o.code);
  }
  bool operator==(const XidEntry& o) const {
    return std::tie(node, gpu, code) == std::tie(o.node, o.gpu, o.code);
  }
};

using JobXids = std::set<XidEntry>;

// At most this many entries; past it the first by node, GPU and code stay,
// so any order of arrival gives the same summary.
inline constexpr size_t kMaxXids = 32;

// Takes `node`'s Xid. Returns whether anything changed.
bool mergeXid(JobXids& xids, const std::string& node, const event::GpuXid& e);

// The state's form, [[node, gpu, code, hardware], ...]; xidsFromState throws
// nlohmann::json::exception on a wrong shape, as the other state readers do.
nlohmann::json xidsToState(const JobXids& xids);
JobXids xidsFromState(const nlohmann::json& j);

// The comment's form: [[code, "node", gpu], ...], sorted by node, GPU and
// code (about 16 bytes an entry).
nlohmann::ordered_json xidsToComment(const JobXids& xids);

}  // namespace accel::aggregator
