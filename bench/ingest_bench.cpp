// Aggregator ingest throughput (verify, dedupe, durable commit, ack) against
// raw ZeroMQ PUSH/PULL moving the same number of same-size messages over
// ipc://, in the same run. Prints JSON. Usage: ingest_bench [EVENTS] [RUNS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>
#include <zmq.hpp>

#include "aggregator_fixture.h"
#include "accel/events/codec.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kNodes = 4;

std::vector<std::vector<uint8_t>> envelopes(const std::string& node, uint64_t epoch, size_t n) {
  std::vector<std::vector<uint8_t>> out;
  out.reserve(n);
  for (size_t i = 1; i <= n; ++i)
    out.push_back(accel::event::encode({node, epoch, i, 1, 1},
                                       accel::event::TaskStarted{uint32_t(i % 1000), 0, uint32_t(i), 4242}));
  return out;
}

// One DEALER per node sends its stream and waits for the final ack.
double ingestRate(size_t total, uint64_t epoch, size_t* message_bytes) {
  std::vector<std::string> names;
  for (size_t i = 0; i < kNodes; ++i) names.push_back("node" + std::to_string(i));
  accel::bench::InProcessAggregator agg(names);
  std::vector<std::vector<std::vector<uint8_t>>> data;
  for (const auto& n : names) data.push_back(envelopes(n, epoch, total / kNodes));
  *message_bytes = data[0][0].size();
  std::vector<std::thread> senders;
  auto start = Clock::now();
  for (size_t i = 0; i < kNodes; ++i)
    senders.emplace_back([&, i] {
      zmq::context_t ctx;
      zmq::socket_t s(ctx, zmq::socket_type::dealer);
      s.set(zmq::sockopt::curve_serverkey, agg.serverKeys().public_key);
      s.set(zmq::sockopt::curve_publickey, agg.nodeKeys(i).public_key);
      s.set(zmq::sockopt::curve_secretkey, agg.nodeKeys(i).secret_key);
      s.set(zmq::sockopt::sndhwm, 0);
      s.set(zmq::sockopt::linger, 0);
      s.connect(agg.endpoint());
      for (const auto& m : data[i]) s.send(zmq::buffer(m), zmq::send_flags::none);
      uint64_t last = data[i].size();
      zmq::message_t ack;
      while (s.recv(ack)) {
        auto a = accel::event::decodeAck({static_cast<const uint8_t*>(ack.data()), ack.size()});
        if (a.ok() && a->seq == last) break;
      }
    });
  for (auto& t : senders) t.join();
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  if (agg.metrics().events_in != total) std::fprintf(stderr, "ingest_bench: stored %llu of %zu\n",
                                                     (unsigned long long)agg.metrics().events_in.load(), total);
  return double(total) / secs;
}

double rawRate(size_t total, size_t bytes) {
  zmq::context_t ctx;
  char tmpl[] = "/tmp/accel-raw-bench-XXXXXX";
  std::string ep = std::string("ipc://") + mkdtemp(tmpl) + "/raw.sock";
  zmq::socket_t pull(ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvhwm, 0);
  pull.bind(ep);
  std::vector<uint8_t> payload(bytes, 0x5a);
  auto start = Clock::now();
  std::vector<std::thread> senders;
  for (size_t i = 0; i < kNodes; ++i)
    senders.emplace_back([&] {
      zmq::socket_t push(ctx, zmq::socket_type::push);
      push.set(zmq::sockopt::sndhwm, 0);
      push.connect(ep);
      for (size_t k = 0; k < total / kNodes; ++k) push.send(zmq::buffer(payload), zmq::send_flags::none);
    });
  zmq::message_t m;
  for (size_t k = 0; k < total / kNodes * kNodes; ++k) (void)pull.recv(m);
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& t : senders) t.join();
  (void)accel::removeTree(std::string(tmpl));
  return double(total) / secs;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  size_t total = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 400000;
  int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  std::vector<double> ingest, raw;
  size_t bytes = 0;
  for (int r = 0; r < runs; ++r) {
    ingest.push_back(ingestRate(total, uint64_t(r + 1), &bytes));
    raw.push_back(rawRate(total, bytes));
  }
  nlohmann::ordered_json j;
  j["benchmark"] = "aggregator_ingest";
  j["events"] = total;
  j["message_bytes"] = bytes;
  j["ingest_events_per_s"] = {{"median", median(ingest)}, {"runs", ingest}};
  j["raw_pushpull_msgs_per_s"] = {{"median", median(raw)}, {"runs", raw}};
  j["ratio"] = median(ingest) / median(raw);
  j["targets"] = {{"ingest_events_per_s", 250000}, {"ratio", 0.25}};
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}
