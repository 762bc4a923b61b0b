#include <unistd.h>

#include <algorithm>
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
  // Page by page, each examining a bounded number of rows, so that the
  // database is never read under one long statement.
  EventFilter filter{q.job_id, q.node, 0, 1000, 100000};
  while (true) {
    auto page = (*store)->readEventPage(filter);
    if (!page.ok()) {
      std::fprintf(stderr, "accel-aggregatord: events: %s\n", page.error().message().c_str());
      return 1;
    }
    for (const auto& e : page->rows) {
      std::string line =
          q.json ? eventJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                 : eventLine(e);
      std::printf("%s\n", line.c_str());
    }
    filter.after_row = std::max(filter.after_row, page->next_row);
    std::fflush(stdout);
    if (page->more) continue;
    if (!q.follow) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace accel::aggregator
