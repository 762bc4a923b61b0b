#include "accel/aggregator/xid_summary.h"

namespace accel::aggregator {

bool mergeXid(JobXids& xids, const std::string& node, const event::GpuXid& e) {
  XidEntry entry{node, e.gpu < -1 ? -1 : e.gpu, e.code, e.gpu_class == "hardware"};
  auto [it, inserted] = xids.insert(entry);
  if (!inserted) {
    if (!entry.hardware || it->hardware) return false;
    // A class only grows: the same code seen once as hardware stays so.
    xids.erase(it);
    xids.insert(entry);
    return true;
  }
  if (xids.size() <= kMaxXids) return true;
  auto last = std::prev(xids.end());
  const bool was_new = !(*last == entry);
  xids.erase(last);
  return was_new;
}

nlohmann::json xidsToState(const JobXids& xids) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& x : xids) out.push_back({x.node, x.gpu, x.code, x.hardware});
  return out;
}

JobXids xidsFromState(const nlohmann::json& j) {
  JobXids xids;
  for (const auto& e : j) {
    if (!e.is_array() || e.size() != 4) throw nlohmann::json::type_error::create(302, "xid", &e);
    xids.insert(XidEntry{e[0].get<std::string>(), e[1].get<int32_t>(), e[2].get<uint32_t>(),
                         e[3].get<bool>()});
  }
  while (xids.size() > kMaxXids) xids.erase(std::prev(xids.end()));
  return xids;
}

nlohmann::ordered_json xidsToComment(const JobXids& xids) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& x : xids) out.push_back({x.code, x.node, x.gpu});
  return out;
}

}  // namespace accel::aggregator
