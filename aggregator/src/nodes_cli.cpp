// `accel-aggregatord nodes`: what the aggregator last heard from each node.
#include <cstdio>
#include <ctime>

#include "accel/aggregator/cli.h"
#include "accel/aggregator/event_json.h"
#include "accel/common/clock.h"

namespace accel::aggregator {
namespace {

// "12 s", never negative (clocks of the writer and the reader may differ by a little).
std::string ago(int64_t then_ns, int64_t now_ns) {
  return std::to_string(std::max<int64_t>(0, now_ns - then_ns) / 1'000'000'000) + " s";
}

}  // namespace

int runNodes(const NodesQuery& q) {
  auto store = Store::open(q.database, Store::Mode::kReadOnly);
  if (!store.ok()) {
    std::fprintf(stderr, "accel-aggregatord: nodes: %s\n", store.error().message().c_str());
    return 1;
  }
  auto rows = (*store)->readNodes();
  if (!rows.ok()) {
    std::fprintf(stderr, "accel-aggregatord: nodes: %s\n", rows.error().message().c_str());
    return 1;
  }
  const int64_t now = wallNs();
  if (!q.json)
    std::printf("%-20s %-13s %-10s %-9s %-6s %-12s %-5s %s\n", "NODE", "STATE", "LAST EVENT",
                "INTERVAL", "KIND", "ACCEL BUSY", "JOBS", "BACKLOG");
  for (const auto& r : *rows) {
    const auto& hb = r.heard.heartbeat;
    const std::string state = nodeState(r.heard, now);
    if (q.json) {
      nlohmann::json j = {
          {"node", r.node},
          {"state", state},
          {"last_event", isoTime(r.heard.last_event_ns)},
          {"last_event_age_s", std::max<int64_t>(0, now - r.heard.last_event_ns) / 1'000'000'000}};
      if (hb) {
        j["last_heartbeat"] = isoTime(r.heard.heartbeat_ns);
        j["heartbeat"] = {{"interval_s", hb->interval_s},
                          {"accel_kind", hb->accel_kind},
                          {"accelerators", hb->accelerators},
                          {"accelerators_busy", hb->accelerators_busy},
                          {"jobs", hb->jobs},
                          {"backlog", hb->backlog}};
      }
      std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      continue;
    }
    std::string interval = hb ? std::to_string(hb->interval_s) + " s" : "-";
    std::string busy =
        hb ? std::to_string(hb->accelerators_busy) + "/" + std::to_string(hb->accelerators) : "-";
    std::printf("%-20s %-13s %-10s %-9s %-6s %-12s %-5s %s\n", r.node.c_str(), state.c_str(),
                ago(r.heard.last_event_ns, now).c_str(), interval.c_str(),
                hb && !hb->accel_kind.empty() ? hb->accel_kind.c_str() : "-", busy.c_str(),
                hb ? std::to_string(hb->jobs).c_str() : "-",
                hb ? std::to_string(hb->backlog).c_str() : "-");
  }
  return 0;
}

}  // namespace accel::aggregator
