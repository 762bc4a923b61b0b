#include "accel/aggregator/idle_summary.h"

#include <algorithm>

namespace accel::aggregator {

using Json = nlohmann::json;

bool mergeIdle(IdleNotes& notes, const std::string& node, const event::JobIdle& e) {
  event::JobIdle kept = e;
  kept.job_id = 0;  // the summary's own; not kept per node
  if (kept.devices.size() > event::JobIdle::kMaxDevices)
    kept.devices.resize(event::JobIdle::kMaxDevices);
  auto [it, fresh] = notes.try_emplace(node, kept);
  if (fresh) return true;
  if (it->second == kept) return false;
  it->second = std::move(kept);
  return true;
}

bool endedIdle(const IdleNotes& notes) {
  return std::any_of(notes.begin(), notes.end(),
                     [](const auto& n) { return n.second.action == event::IdleAction::kCancel; });
}

Json idleToState(const IdleNotes& notes) {
  Json out = Json::object();
  for (const auto& [node, e] : notes)
    out[node] = {{"idle_s", e.idle_s},
                 {"devices", e.devices},
                 {"action", static_cast<int>(e.action)},
                 {"told_job", e.told_job}};
  return out;
}

IdleNotes idleFromState(const Json& j) {
  IdleNotes out;
  for (const auto& [node, e] : j.get_ref<const Json::object_t&>()) {
    event::JobIdle n;
    n.job_id = 0;  // the summary's
    n.idle_s = e.at("idle_s").get<uint64_t>();
    n.devices = e.at("devices").get<std::vector<uint32_t>>();
    const int action = e.at("action").get<int>();
    if (action < 0 || action > static_cast<int>(event::IdleAction::kCancelFailed))
      throw Json::other_error::create(501, "idle: bad action", &e);
    n.action = static_cast<event::IdleAction>(action);
    n.told_job = e.at("told_job").get<bool>();
    out[node] = std::move(n);
  }
  return out;
}

nlohmann::ordered_json idleToComment(const IdleNotes& notes) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [node, e] : notes) {
    nlohmann::ordered_json n;
    n["idle_s"] = e.idle_s;
    n["gpus"] = e.devices;
    n["action"] = event::idleActionName(e.action);
    out[node] = std::move(n);
  }
  return out;
}

}  // namespace accel::aggregator
