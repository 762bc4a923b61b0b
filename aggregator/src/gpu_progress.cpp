#include "accel/aggregator/gpu_progress.h"

#include <algorithm>

#include "accel/aggregator/gpu_summary.h"

namespace accel::aggregator {

using Json = nlohmann::json;

bool mergeProgress(LiveGpuUse& live, const std::string& node, const event::GpuProgress& progress,
                   int64_t received_ns) {
  LiveGpu next;
  next.received_ns = received_ns;
  next.idle_s = progress.idle_s;
  next.samples = progress.gpu.samples;
  next.devices = progress.gpu.devices;
  if (next.devices.size() > event::GpuFigures::kMaxDevices)
    next.devices.resize(event::GpuFigures::kMaxDevices);
  std::sort(next.devices.begin(), next.devices.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  auto [it, fresh] = live.try_emplace(node, next);
  if (fresh) return true;
  if (it->second == next) return false;
  it->second = std::move(next);
  return true;
}

// The devices in gpu_summary's state form, with the node's own figures beside.
Json liveToState(const LiveGpuUse& live) {
  Json out = Json::object();
  for (const auto& [node, l] : live) {
    const Json devices = gpuToState(GpuUse{{node, l.devices}});
    out[node] = {{"received_ns", l.received_ns},
                 {"idle_s", l.idle_s},
                 {"samples", l.samples},
                 {"devices", devices.at(node)}};
  }
  return out;
}

LiveGpuUse liveFromState(const Json& j) {
  LiveGpuUse out;
  for (const auto& [node, l] : j.get_ref<const Json::object_t&>()) {
    LiveGpu g;
    g.received_ns = l.at("received_ns").get<int64_t>();
    g.idle_s = l.at("idle_s").get<uint64_t>();
    g.samples = l.at("samples").get<uint64_t>();
    g.devices = gpuFromState(Json{{node, l.at("devices")}}).at(node);
    out[node] = std::move(g);
  }
  return out;
}

}  // namespace accel::aggregator
