// Aggregator ingest throughput (verify, dedupe, durable commit, ack) against
// raw ZeroMQ PUSH/PULL moving the same number of same-size messages over
// ipc://, in the same run, both without and with CURVE (the aggregator always
// uses CURVE). Prints JSON. Usage: ingest_bench [EVENTS] [RUNS] [--ingest-only]
// (--ingest-only: no baselines, for profiling the aggregator alone).
//
// Why the baseline is fair: it moves the same number of messages of the same
// size over the same transport, with the same threads (one context per
// sender, one for the receiver) competing for the same cores, in the same
// run; it does nothing with what it receives. The aggregator's wire carries
// one event per message, so events/s and messages/s count the same thing.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>
#include <zmq.hpp>

#include "accel/events/codec.h"
#include "aggregator_fixture.h"
#include "temp_dir.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kNodes = 4;

// CPU seconds used so far by every thread of this process (senders and
// receivers alike); less sensitive to other programs than the rates are.
double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto secs = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

struct Rate {
  double per_s = 0;
  double cpu_us = 0;  // CPU microseconds per message, all threads
};

std::vector<std::vector<uint8_t>> envelopes(const std::string& node, uint64_t epoch, size_t n) {
  std::vector<std::vector<uint8_t>> out;
  out.reserve(n);
  for (size_t i = 1; i <= n; ++i)
    out.push_back(
        accel::event::encode({node, epoch, i, 1, 1},
                             accel::event::TaskStarted{uint32_t(i % 1000), 0, uint32_t(i), 4242}));
  return out;
}

// One DEALER per node sends its stream and waits for the final ack.
Rate ingestRate(size_t total, uint64_t epoch, size_t* message_bytes, uint64_t* batches) {
  std::vector<std::string> names;
  for (size_t i = 0; i < kNodes; ++i) names.push_back("node" + std::to_string(i));
  accel::bench::InProcessAggregator agg(names);
  std::vector<std::vector<std::vector<uint8_t>>> data;
  for (const auto& n : names) data.push_back(envelopes(n, epoch, total / kNodes));
  *message_bytes = data[0][0].size();
  std::vector<std::thread> senders;
  double cpu0 = cpuSeconds();
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
  double cpu = cpuSeconds() - cpu0;
  *batches = agg.metrics().batches;
  if (agg.metrics().events_in != total)
    std::fprintf(stderr, "ingest_bench: stored %llu of %zu\n",
                 (unsigned long long)agg.metrics().events_in.load(), total);
  return {double(total) / secs, cpu / double(total) * 1e6};
}

// The baseline: PUSH/PULL over ipc:// moving as many messages of the same
// size, arranged like the ingest run (one context and so one I/O thread per
// sender, another for the receiver), with or without CURVE on every socket.
Rate rawRate(size_t total, size_t bytes, bool curve) {
  zmq::context_t ctx;
  accel::support::TempDir tmp("accel-raw-bench");
  std::string ep = "ipc://" + tmp.file("raw.sock");
  auto server = *accel::event::generateCurveKeyPair();
  zmq::socket_t pull(ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvhwm, 0);
  if (curve)
    pull.set(zmq::sockopt::curve_server, 1),
        pull.set(zmq::sockopt::curve_secretkey, server.secret_key);
  pull.bind(ep);
  std::vector<uint8_t> payload(bytes, 0x5a);
  double cpu0 = cpuSeconds();
  auto start = Clock::now();
  std::vector<std::thread> senders;
  for (size_t i = 0; i < kNodes; ++i)
    senders.emplace_back([&] {
      zmq::context_t own;
      zmq::socket_t push(own, zmq::socket_type::push);
      push.set(zmq::sockopt::sndhwm, 0);
      push.set(zmq::sockopt::linger,
               -1);  // every message reaches the receiver before the context ends
      if (curve) {
        auto keys = *accel::event::generateCurveKeyPair();
        push.set(zmq::sockopt::curve_serverkey, server.public_key);
        push.set(zmq::sockopt::curve_publickey, keys.public_key);
        push.set(zmq::sockopt::curve_secretkey, keys.secret_key);
      }
      push.connect(ep);
      for (size_t k = 0; k < total / kNodes; ++k)
        push.send(zmq::buffer(payload), zmq::send_flags::none);
      push.close();
    });
  zmq::message_t m;
  for (size_t k = 0; k < total / kNodes * kNodes; ++k) (void)pull.recv(m);
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& t : senders) t.join();
  double cpu = cpuSeconds() - cpu0;
  (void)tmp.remove();
  return {double(total) / secs, cpu / double(total) * 1e6};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The slowest of the runs (throughput's worst case, in place of a p99).
double slowest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

nlohmann::ordered_json figures(const std::vector<double>& v) {
  return {{"median", median(v)}, {"slowest", slowest(v)}, {"runs", v}};
}

nlohmann::ordered_json cpuFigures(const std::vector<double>& v) {
  return {{"median", median(v)}, {"runs", v}};
}

// Each run's ingest rate over the same run's baseline: the load of the
// moment (others' builds) weighs on both alike.
std::vector<double> ratios(const std::vector<double>& ingest, const std::vector<double>& base) {
  std::vector<double> out;
  for (size_t i = 0; i < ingest.size() && i < base.size(); ++i) out.push_back(ingest[i] / base[i]);
  return out;
}

std::string loadAverage() {
  std::string a, b, c;
  std::ifstream("/proc/loadavg") >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace

int main(int argc, char** argv) {
  size_t total = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 400000;
  int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  bool baselines = !(argc > 3 && std::strcmp(argv[3], "--ingest-only") == 0);
  std::vector<double> ingest, raw, raw_curve, ingest_cpu, raw_cpu, raw_curve_cpu;
  std::vector<uint64_t> batches(static_cast<size_t>(runs));
  size_t bytes = 0;
  std::string load_before = loadAverage();
  auto keep = [](const Rate& r, std::vector<double>& rates, std::vector<double>& cpu) {
    rates.push_back(r.per_s);
    cpu.push_back(r.cpu_us);
  };
  for (int r = 0; r < runs; ++r) {
    keep(ingestRate(total, uint64_t(r + 1), &bytes, &batches[size_t(r)]), ingest, ingest_cpu);
    if (!baselines) continue;
    keep(rawRate(total, bytes, false), raw, raw_cpu);
    keep(rawRate(total, bytes, true), raw_curve, raw_curve_cpu);
  }
  nlohmann::ordered_json j;
  j["benchmark"] = "aggregator_ingest";
  j["events"] = total;
  j["nodes"] = kNodes;
  j["message_bytes"] = bytes;
  j["events_per_message"] = 1;
  j["load_average"] = {load_before, loadAverage()};  // before and after, from /proc/loadavg
  j["ingest_events_per_s"] =
      figures(ingest);            // CURVE, verify, dedupe, commit (synchronous=FULL), ack
  j["ingest_batches"] = batches;  // transactions per run
  j["ingest_cpu_us_per_event"] = cpuFigures(ingest_cpu);  // all threads, senders included
  if (baselines) {
    j["raw_pushpull_msgs_per_s"] = figures(raw);  // no CURVE
    j["raw_pushpull_curve_msgs_per_s"] = figures(raw_curve);
    j["raw_pushpull_cpu_us_per_msg"] = cpuFigures(raw_cpu);
    j["raw_pushpull_curve_cpu_us_per_msg"] = cpuFigures(raw_curve_cpu);
    // Medians of the per-run ratios (each run's ingest over its own baselines).
    j["ratio"] = median(ratios(ingest, raw));
    j["ratio_vs_curve"] = median(ratios(ingest, raw_curve));
    j["ratio_runs"] = ratios(ingest, raw);
    j["ratio_vs_curve_runs"] = ratios(ingest, raw_curve);
  }
  j["targets"] = {{"ingest_events_per_s", 250000}, {"ratio_vs_curve", 0.6}};
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}
