#include "accel/aggregator/gpu_summary.h"

#include <algorithm>
#include <cmath>

namespace accel::aggregator {

using Json = nlohmann::json;

bool mergeGpu(GpuUse& use, const std::string& node, const event::GpuFigures& figures) {
  std::vector<event::GpuDeviceFigures> devices = figures.devices;
  if (devices.size() > event::GpuFigures::kMaxDevices)
    devices.resize(event::GpuFigures::kMaxDevices);
  std::sort(devices.begin(), devices.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  auto [it, fresh] = use.try_emplace(node, devices);
  if (fresh) return true;
  if (it->second == devices) return false;
  it->second = std::move(devices);
  return true;
}

Json gpuToState(const GpuUse& use) {
  Json out = Json::object();
  for (const auto& [node, devices] : use) {
    Json list = Json::array();
    for (const auto& d : devices)
      list.push_back({{"index", d.index},
                      {"pci_bus_id", d.pci_bus_id},
                      {"uuid", d.uuid},
                      {"samples", d.samples},
                      {"util_mean_pct", d.util_mean_pct},
                      {"util_max_pct", d.util_max_pct},
                      {"memory_used_max_mib",
                       d.memory_used_max_mib ? int64_t(*d.memory_used_max_mib) : int64_t{-1}},
                      {"energy_j", d.energy_j ? *d.energy_j : -1.0}});
    out[node] = std::move(list);
  }
  return out;
}

GpuUse gpuFromState(const Json& j) {
  GpuUse out;
  for (const auto& [node, list] : j.get_ref<const Json::object_t&>()) {
    auto& devices = out[node];
    for (const auto& d : list.get_ref<const Json::array_t&>()) {
      event::GpuDeviceFigures f;
      f.index = d.at("index").get<uint32_t>();
      f.pci_bus_id = d.at("pci_bus_id").get<std::string>();
      f.uuid = d.at("uuid").get<std::string>();
      f.samples = d.at("samples").get<uint64_t>();
      f.util_mean_pct = d.at("util_mean_pct").get<float>();
      f.util_max_pct = d.at("util_max_pct").get<uint32_t>();
      const int64_t mem = d.at("memory_used_max_mib").get<int64_t>();
      if (mem >= 0) f.memory_used_max_mib = uint64_t(mem);
      const double energy = d.at("energy_j").get<double>();
      if (energy >= 0) f.energy_j = energy;
      devices.push_back(std::move(f));
    }
  }
  return out;
}

nlohmann::ordered_json gpuToComment(const GpuUse& use) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [node, devices] : use) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& d : devices) {
      const double mean = std::isfinite(d.util_mean_pct) ? d.util_mean_pct : -1.0;
      rows.push_back({d.index, std::lround(std::clamp(mean, -1.0, 100.0)), d.util_max_pct,
                      d.memory_used_max_mib ? int64_t(*d.memory_used_max_mib) : int64_t{-1},
                      d.energy_j ? std::llround(*d.energy_j) : -1LL, d.samples});
    }
    out[node] = std::move(rows);
  }
  return out;
}

}  // namespace accel::aggregator
