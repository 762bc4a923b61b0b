// Emit-to-durable-ack latency: an Outbox (spool + sender thread) publishes at
// a fixed rate to an in-process aggregator; an event's latency is the time
// from publish() to the moment the outbox has released it (the aggregator
// committed it and the ack came back). Prints JSON with median and p99.
// Usage: event_latency_bench [RATE_PER_S] [SECONDS] [SYNC_DELAY_US]
// (SYNC_DELAY_US: the outbox's group-commit delay; default the outbox's own)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "accel/events/outbox.h"
#include "aggregator_fixture.h"

namespace {
using Clock = std::chrono::steady_clock;
}

int main(int argc, char** argv) {
  double rate = argc > 1 ? std::atof(argv[1]) : 10000;
  double seconds = argc > 2 ? std::atof(argv[2]) : 5;
  const long sync_delay_us = argc > 3 ? std::atol(argv[3]) : -1;
  accel::bench::InProcessAggregator agg({"node0"});
  accel::event::OutboxOptions o;
  o.node = "node0";
  o.spool_dir = agg.dir() + "/spool";
  o.endpoint = agg.endpoint();
  o.server_public_key = agg.serverKeys().public_key;
  o.client_keys = agg.nodeKeys(0);
  if (sync_delay_us >= 0) o.sync_delay = std::chrono::microseconds(sync_delay_us);
  auto box = accel::event::Outbox::start(o);
  if (!box.ok()) return std::fprintf(stderr, "%s\n", box.error().message().c_str()), 1;
  const size_t n = size_t(rate * seconds);
  std::vector<Clock::time_point> sent(n), acked(n);
  std::atomic<size_t> published{0};
  std::atomic<bool> done{false};
  // Watches the acknowledged count; every event up to it is released now.
  std::thread watcher([&] {
    size_t seen = 0;
    auto report = Clock::now();
    while (seen < n) {
      if (Clock::now() - report > std::chrono::seconds(2)) {
        std::fprintf(stderr, "%s\n", accel::event::describe((*box)->stats()).c_str());
        report = Clock::now();
      }
      size_t a = std::min<size_t>((*box)->stats().acked, published.load());
      auto now = Clock::now();
      for (; seen < a; ++seen) acked[seen] = now;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    done = true;
  });
  auto start = Clock::now();
  auto period = std::chrono::duration<double>(1.0 / rate);
  for (size_t i = 0; i < n; ++i) {
    std::this_thread::sleep_until(start +
                                  std::chrono::duration_cast<Clock::duration>(period * double(i)));
    sent[i] = Clock::now();
    if (!(*box)->publish(accel::event::TaskStarted{1, 0, uint32_t(i), 1}).ok()) return 1;
    published = i + 1;
  }
  watcher.join();
  std::vector<double> ms(n);
  for (size_t i = 0; i < n; ++i)
    ms[i] = std::chrono::duration<double, std::milli>(acked[i] - sent[i]).count();
  std::sort(ms.begin(), ms.end());
  const auto st = (*box)->stats();
  nlohmann::ordered_json j;
  j["benchmark"] = "event_emit_to_durable_ack";
  j["rate_per_s"] = rate;
  j["events"] = n;
  j["sync_delay_us"] = std::chrono::duration_cast<std::chrono::microseconds>(o.sync_delay).count();
  j["latency_ms"] = {{"median", ms[n / 2]}, {"p99", ms[n * 99 / 100]}, {"max", ms.back()}};
  j["spool_syncs"] = st.syncs;
  j["slowest_spool_sync_ms"] = st.slowest_sync_us / 1000.0;
  j["targets"] = {{"p99_ms", 50}};
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}
