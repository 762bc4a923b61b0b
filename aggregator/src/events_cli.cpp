#include <unistd.h>

#include <cstdio>
#include <thread>

#include "accel/aggregator/cli.h"
#include "accel/aggregator/event_json.h"

namespace accel::aggregator {

int runEvents(const EventsQuery& q) {
  auto store = Store::open(q.database, Store::Mode::kReadOnly);
  if (!store.ok()) {
    std::fprintf(stderr, "accel-aggregatord: events: %s\n", store.error().message().c_str());
    return 1;
  }
  EventFilter filter{q.job_id, q.node, 0, 1000};
  while (true) {
    auto rows = (*store)->readEvents(filter);
    if (!rows.ok()) {
      std::fprintf(stderr, "accel-aggregatord: events: %s\n", rows.error().message().c_str());
      return 1;
    }
    for (const auto& e : *rows) {
      std::string line =
          q.json ? eventJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                 : eventLine(e);
      std::printf("%s\n", line.c_str());
      filter.after_row = e.row;
    }
    std::fflush(stdout);
    if (rows->size() == size_t(filter.limit)) continue;
    if (!q.follow) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace accel::aggregator
