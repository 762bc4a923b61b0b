#pragma once
// What a farm of simulated nodes sees of its links, for the scale benchmark:
// how long each node took from its outbox's start to its first finished CURVE
// handshake (OutboxStats::link_up), and how many links are up at a moment.
//
// A thread reads the stats of the nodes not yet linked every kPoll, so the
// times are rounded up to that; once every node is linked it reads nothing.
// Nodes are added while the thread runs (add() from one thread only).
//
// Below it, what the coordinator reads of the links: the farms' reports
// gathered, and the aggregator's own count from its metrics endpoint.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "accel/common/clock.h"
#include "accel/events/outbox.h"
#include "process_util.h"

namespace accel::bench {

class LinkWatch {
 public:
  static constexpr std::chrono::milliseconds kPoll{50};

  explicit LinkWatch(size_t capacity)
      : boxes_(capacity), started_(capacity), linked_(new std::atomic<int64_t>[capacity]) {
    for (size_t i = 0; i < capacity; ++i) linked_[i] = 0;
    thread_ = std::thread([this] { run(); });
  }
  ~LinkWatch() {
    stop_ = true;
    thread_.join();
  }
  LinkWatch(const LinkWatch&) = delete;
  LinkWatch& operator=(const LinkWatch&) = delete;

  // `box` was started at `started_ns` (monoNs, taken before Outbox::start).
  // At most `capacity` nodes; `box` must outlive this watch.
  void add(const event::Outbox* box, int64_t started_ns) {
    size_t i = added_.load();
    boxes_[i] = box;
    started_[i] = started_ns;
    added_.store(i + 1);  // publishes the slot to the thread
  }

  // One line: the links up now, the nodes never linked so far, then the
  // milliseconds from start to first link of every node linked so far.
  std::string report() const {
    size_t n = added_.load(), up = 0, never = 0;
    std::string times;
    for (size_t i = 0; i < n; ++i) {
      up += boxes_[i]->stats().link_up ? 1 : 0;
      int64_t at = linked_[i].load();
      if (at == 0) {
        ++never;
        continue;
      }
      times += " " + std::to_string((at - started_[i]) / 1'000'000);
    }
    return std::to_string(up) + " " + std::to_string(never) + times + "\n";
  }

 private:
  void run() {
    size_t first_unlinked = 0;
    while (!stop_) {
      std::this_thread::sleep_for(kPoll);
      const size_t n = added_.load();
      const int64_t now = monoNs();
      bool all = true;
      for (size_t i = first_unlinked; i < n; ++i) {
        if (linked_[i].load() != 0) continue;
        if (boxes_[i]->stats().link_up)
          linked_[i] = now;
        else if (all)
          first_unlinked = i, all = false;
      }
      if (all) first_unlinked = n;
    }
  }

  std::vector<const event::Outbox*> boxes_;
  std::vector<int64_t> started_;
  std::unique_ptr<std::atomic<int64_t>[]> linked_;
  std::atomic<size_t> added_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts once every member above exists
};

// The links as the farms see them at one moment (LinkWatch::report of each).
struct FleetLinks {
  size_t up = 0, never = 0, farms_answered = 0;
  std::vector<double> first_link_s;  // sorted
};

// Asks every farm (SIGUSR2) for its LinkWatch::report, FARM_DIR/farmFIRST.links.
inline FleetLinks askFarmsForLinks(const std::string& dir, const std::vector<size_t>& firsts,
                                   const std::vector<pid_t>& pids) {
  auto file = [&](size_t f) { return dir + "/farm" + std::to_string(f) + ".links"; };
  for (size_t f : firsts) unlink(file(f).c_str());
  for (pid_t p : pids) kill(p, SIGUSR2);
  (void)support::waitFor(
      [&] {
        return std::all_of(firsts.begin(), firsts.end(),
                           [&](size_t f) { return access(file(f).c_str(), F_OK) == 0; });
      },
      std::chrono::seconds(60));
  FleetLinks out;
  for (size_t f : firsts) {
    if (access(file(f).c_str(), F_OK) != 0) continue;
    std::istringstream in(support::readFile(file(f)));
    size_t up = 0, never = 0;
    if (!(in >> up >> never)) continue;
    ++out.farms_answered;
    out.up += up, out.never += never;
    for (int64_t ms; in >> ms;) out.first_link_s.push_back(static_cast<double>(ms) / 1e3);
  }
  std::sort(out.first_link_s.begin(), out.first_link_s.end());
  return out;
}

// The q-quantile of sorted values; -1 when there are none.
inline double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return -1;
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(q * double(sorted.size())))];
}

// The aggregator's own count of node connections (its metrics endpoint on
// 127.0.0.1:port); -1 when it does not answer.
inline int64_t aggregatorLinks(uint16_t port) {
  const std::string answer = support::httpExchange(port, "GET /metrics HTTP/1.0\r\n\r\n");
  const std::string key = "\naccel_aggregator_nodes_connected ";
  size_t at = answer.find(key);
  if (at == std::string::npos) return -1;
  return static_cast<int64_t>(std::stod(answer.substr(at + key.size())));
}

}  // namespace accel::bench
