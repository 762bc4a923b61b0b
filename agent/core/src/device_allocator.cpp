#include "accel/agent/device_allocator.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace accel::agent {
namespace {

Result<uint32_t> parseIndex(std::string_view t, std::string_view whole) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size() || v > 4096)
    return Error(ErrorCode::kInvalidArgument, "bad GPU list '" + std::string(whole) + "'");
  return v;
}

// Greedy cluster around `seed`: the seed plus the count-1 free devices
// nearest to it. Score: sum of distances to the seed, then NIC distance.
struct Pick {
  std::vector<uint32_t> devices;
  long score = std::numeric_limits<long>::max();
};

Pick clusterAround(const AllocatorInput& in, const std::vector<uint32_t>& free, uint32_t seed,
                   uint32_t count) {
  std::vector<std::pair<int, uint32_t>> others;
  for (uint32_t d : free)
    if (d != seed) others.emplace_back(in.device_distance ? in.device_distance(seed, d) : 0, d);
  std::sort(others.begin(), others.end());
  Pick p;
  p.devices.push_back(seed);
  long score = 0;
  for (uint32_t i = 0; i + 1 < count; ++i) {
    score += others[i].first;
    p.devices.push_back(others[i].second);
  }
  // NIC distance breaks ties between equally tight clusters.
  score = score * 16 + (in.nic_distance ? in.nic_distance(seed) : 0);
  p.score = score;
  std::sort(p.devices.begin(), p.devices.end());
  return p;
}

}  // namespace

Result<std::vector<uint32_t>> parseGpuList(std::string_view text) {
  std::vector<uint32_t> out;
  std::string_view rest = text;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    auto item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (comma != std::string_view::npos && rest.empty())
      return Error(ErrorCode::kInvalidArgument, "bad GPU list '" + std::string(text) + "'");
    auto dash = item.find('-');
    auto lo = parseIndex(item.substr(0, dash), text);
    ACCEL_TRY(lo);
    uint32_t hi = *lo;
    if (dash != std::string_view::npos) {
      auto h = parseIndex(item.substr(dash + 1), text);
      ACCEL_TRY(h);
      hi = *h;
      if (hi < *lo)
        return Error(ErrorCode::kInvalidArgument, "bad GPU range in '" + std::string(text) + "'");
    }
    for (uint32_t v = *lo; v <= hi; ++v)
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

Result<std::vector<uint32_t>> pickGpus(const AllocatorInput& in,
                                       const std::vector<uint32_t>& ordinals) {
  std::vector<uint32_t> out;
  for (uint32_t ord : ordinals) {
    auto it = std::find_if(in.devices.begin(), in.devices.end(), [&](const DeviceSlot& s) {
      return s.kind == "gpu" && s.kind_ordinal == ord;
    });
    if (it == in.devices.end())
      return Error(ErrorCode::kNotFound, "Slurm assigned GPU " + std::to_string(ord) +
                                             " but this node's topology has no such GPU");
    if (in.held.count(it->index))
      return Error(ErrorCode::kConflict,
                   "GPU " + std::to_string(ord) + " is held by another live job");
    out.push_back(it->index);
  }
  return out;
}

Result<std::vector<uint32_t>> pickByCount(const AllocatorInput& in, std::string_view kind,
                                          uint32_t count) {
  if (count == 0) return std::vector<uint32_t>{};
  std::vector<uint32_t> free;
  size_t total = 0;
  for (const auto& s : in.devices) {
    if (s.kind != kind) continue;
    ++total;
    if (!in.held.count(s.index)) free.push_back(s.index);
  }
  if (free.size() < count)
    return Error(ErrorCode::kInvalidArgument,
                 "asked for " + std::to_string(count) + " " + std::string(kind) + " device(s); " +
                     std::to_string(free.size()) + " of " + std::to_string(total) + " are free");
  Pick best;
  for (uint32_t seed : free) {
    Pick p = clusterAround(in, free, seed, count);
    if (p.score < best.score) best = std::move(p);
  }
  return best.devices;
}

}  // namespace accel::agent
