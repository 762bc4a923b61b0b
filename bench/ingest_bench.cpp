// Aggregator ingest throughput (verify, dedupe, durable commit, ack) against
// raw ZeroMQ PUSH/PULL moving the same number of same-size messages over
// ipc://, in the same run, both without and with CURVE (the aggregator always
// uses CURVE). Prints JSON. Usage: ingest_bench [EVENTS] [RUNS] [--ingest-only]
// (--ingest-only: no baselines, for profiling the aggregator alone).
//
//   ingest_bench [EVENTS] [RUNS] --flood [SOCKETS] [--unguarded] [--flooder-cpu PERCENT]
//
// Ingest while a stranger floods the node socket with CURVE handshakes
// (hello_flood.h), as a ratio to ingest without the flood in the same run:
// both over TCP on loopback, the nodes from 127.0.0.1, the stranger from
// 127.0.0.2 in a child process of its own (its CPU is reported apart).
// --unguarded: the server as it was before its bounds on strangers (one I/O
// thread, libzmq's 30 s handshake deadline, no bound per address).
// --flooder-cpu: the stranger is held to PERCENT of one core in a cpu cgroup
// of its own (hello_flood.h: CpuQuota), as if it ran on another machine;
// its connections still reach the aggregator, and are counted.
//
// Why the baseline is fair: it moves the same number of messages of the same
// size over the same transport, with the same threads (one context per
// sender, one for the receiver) competing for the same cores, in the same
// run; it does nothing with what it receives. The aggregator's wire carries
// one event per message, so events/s and messages/s count the same thing.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

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
#include "hello_flood.h"
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

}  // namespace

namespace accel::bench {

// The aggregator as the daemon runs it (its defaults), on TCP loopback with
// a port of the system's choosing; `unguarded`: as it was before its bounds
// on strangers.
class TcpAggregator {
 public:
  TcpAggregator(const std::vector<std::string>& nodes, bool unguarded) {
    (void)makeDirectory(dir_ + "/nodes", 0755);
    server_keys_ = *event::generateCurveKeyPair();
    for (const auto& n : nodes) {
      node_keys_.push_back(*event::generateCurveKeyPair());
      std::ofstream(dir_ + "/nodes/" + n + ".pub") << node_keys_.back().public_key << "\n";
    }
    store_ =
        aggregator::Store::open(dir_ + "/events.db", aggregator::Store::Mode::kReadWrite).value();
    ingestor_ = std::make_unique<aggregator::Ingestor>(*store_, metrics_, 64 * 1024);
    if (!ingestor_->load().ok()) std::abort();
    aggregator::ServerOptions o{"tcp://127.0.0.1:*", server_keys_, dir_ + "/nodes", 64 * 1024,
                                8192};
    if (unguarded)
      o.io_threads = 1, o.handshake_timeout = std::chrono::seconds(30), o.per_address = 0;
    auto server = aggregator::Server::start(o, *ingestor_, metrics_);
    if (!server.ok()) std::fprintf(stderr, "%s\n", server.error().message().c_str()), std::abort();
    server_ = std::move(*server);
    std::string ep = server_->endpoint();
    host_port_ = ep.substr(std::string("tcp://").size());
    thread_ = std::thread([this] {
      while (!stop_) (void)server_->poll(std::chrono::milliseconds(20));
    });
  }
  ~TcpAggregator() {
    stop_ = true;
    thread_.join();
    server_.reset();
    ingestor_.reset();
    store_.reset();
    (void)tmp_.remove();
  }
  const std::string& hostPort() const { return host_port_; }
  const event::CurveKeyPair& serverKeys() const { return server_keys_; }
  const event::CurveKeyPair& nodeKeys(size_t i) const { return node_keys_[i]; }
  const aggregator::Metrics& metrics() const { return metrics_; }

 private:
  support::TempDir tmp_{"accel-flood-bench"};
  std::string dir_ = tmp_.path();
  event::CurveKeyPair server_keys_;
  std::vector<event::CurveKeyPair> node_keys_;
  aggregator::Metrics metrics_;
  std::unique_ptr<aggregator::Store> store_;
  std::unique_ptr<aggregator::Ingestor> ingestor_;
  std::unique_ptr<aggregator::Server> server_;
  std::string host_port_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace accel::bench

namespace {

// Ingest over TCP with a stranger's flood (a child process) or without it.
struct FloodRun {
  Rate alone, flooded;
  uint64_t refused = 0, cut = 0;  // by ZAP, and on accept, during the flooded part
  uint64_t connections = 0;       // the stranger's, during the flooded part
  uint64_t throttled = 0;         // periods its CPU bound held it back, whole run
  double flooder_cpu_s = 0;
};

Rate tcpIngest(accel::bench::TcpAggregator& agg, size_t total, uint64_t epoch) {
  std::vector<std::vector<std::vector<uint8_t>>> data;
  for (size_t i = 0; i < kNodes; ++i)
    data.push_back(envelopes("node" + std::to_string(i), epoch, total / kNodes));
  uint64_t before = agg.metrics().events_in;
  double cpu0 = cpuSeconds();
  auto start = Clock::now();
  std::vector<std::thread> senders;
  for (size_t i = 0; i < kNodes; ++i)
    senders.emplace_back([&, i] {
      zmq::context_t ctx;
      zmq::socket_t s(ctx, zmq::socket_type::dealer);
      s.set(zmq::sockopt::curve_serverkey, agg.serverKeys().public_key);
      s.set(zmq::sockopt::curve_publickey, agg.nodeKeys(i).public_key);
      s.set(zmq::sockopt::curve_secretkey, agg.nodeKeys(i).secret_key);
      s.set(zmq::sockopt::sndhwm, 0);
      s.set(zmq::sockopt::linger, 0);
      s.connect("tcp://127.0.0.1:0;" + agg.hostPort());
      for (const auto& m : data[i]) s.send(zmq::buffer(m), zmq::send_flags::none);
      zmq::message_t ack;
      while (s.recv(ack)) {
        auto a = accel::event::decodeAck({static_cast<const uint8_t*>(ack.data()), ack.size()});
        if (a.ok() && a->seq == data[i].size()) break;
      }
    });
  for (auto& t : senders) t.join();
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  double cpu = cpuSeconds() - cpu0;
  if (agg.metrics().events_in - before != total)
    std::fprintf(stderr, "ingest_bench: stored %llu of %zu\n",
                 (unsigned long long)(agg.metrics().events_in - before), total);
  return {double(total) / secs, cpu / double(total) * 1e6};
}

// One run: ingest alone, then (same aggregator, fresh epochs) under the flood.
FloodRun floodRun(size_t total, uint64_t epoch, int sockets, bool unguarded, int flooder_cpu) {
  std::vector<std::string> names;
  for (size_t i = 0; i < kNodes; ++i) names.push_back("node" + std::to_string(i));
  accel::bench::Flooder flooder(flooder_cpu);  // forked while this process has one thread
  accel::bench::TcpAggregator agg(names, unguarded);
  FloodRun out;
  out.alone = tcpIngest(agg, total, epoch * 2);
  flooder.start(agg.hostPort(), agg.serverKeys().public_key, sockets);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the flood under way
  uint64_t refused0 = agg.metrics().rejected[size_t(accel::aggregator::Reject::kUnknownKey)];
  uint64_t cut0 = agg.metrics().rejected[size_t(accel::aggregator::Reject::kAddressLimit)];
  uint64_t connections0 = flooder.connections();
  out.flooded = tcpIngest(agg, total, epoch * 2 + 1);
  out.connections = flooder.connections() - connections0;
  out.throttled = flooder.throttled();
  out.refused = agg.metrics().rejected[size_t(accel::aggregator::Reject::kUnknownKey)] - refused0;
  out.cut = agg.metrics().rejected[size_t(accel::aggregator::Reject::kAddressLimit)] - cut0;
  out.flooder_cpu_s = flooder.stop();
  return out;
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

int floodMain(size_t total, int runs, int sockets, bool unguarded, int flooder_cpu);

int main(int argc, char** argv) {
  if (argc > 3 && std::strcmp(argv[3], "--flood") == 0) {
    int sockets = 64;
    bool unguarded = false;
    int flooder_cpu = 0;
    for (int i = 4; i < argc; ++i) {
      if (std::strcmp(argv[i], "--unguarded") == 0)
        unguarded = true;
      else if (std::strcmp(argv[i], "--flooder-cpu") == 0 && i + 1 < argc)
        flooder_cpu = std::atoi(argv[++i]);
      else
        sockets = std::atoi(argv[i]);
    }
    return floodMain(argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 400000,
                     argc > 2 ? std::atoi(argv[2]) : 3, sockets, unguarded, flooder_cpu);
  }
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

int floodMain(size_t total, int runs, int sockets, bool unguarded, int flooder_cpu_bound) {
  std::vector<double> alone, flooded, ratio, refused, cut, flooder_cpu, alone_cpu, flooded_cpu,
      connections, throttled;
  std::string load_before = loadAverage();
  for (int r = 0; r < runs; ++r) {
    FloodRun f = floodRun(total, uint64_t(r + 1), sockets, unguarded, flooder_cpu_bound);
    alone.push_back(f.alone.per_s);
    flooded.push_back(f.flooded.per_s);
    ratio.push_back(f.flooded.per_s / f.alone.per_s);
    refused.push_back(double(f.refused));
    cut.push_back(double(f.cut));
    flooder_cpu.push_back(f.flooder_cpu_s);
    alone_cpu.push_back(f.alone.cpu_us);
    flooded_cpu.push_back(f.flooded.cpu_us);
    connections.push_back(double(f.connections));
    throttled.push_back(double(f.throttled));
  }
  nlohmann::ordered_json j;
  j["benchmark"] = "aggregator_ingest_under_hello_flood";
  j["events"] = total;
  j["nodes"] = kNodes;
  j["flood_sockets"] = sockets;
  j["server"] = unguarded ? "unguarded (1 I/O thread, 30 s handshakes, no bound per address)"
                          : "defaults (2 I/O threads, 3 s handshakes, 16 per address)";
  j["flooder_cpu_bound"] = flooder_cpu_bound > 0
                               ? std::to_string(flooder_cpu_bound) + " % of one core (cpu cgroup)"
                               : std::string("none (it shares this machine's cores)");
  j["load_average"] = {load_before, loadAverage()};
  j["ingest_alone_events_per_s"] = figures(alone);
  j["ingest_flooded_events_per_s"] = figures(flooded);
  // This process's CPU (aggregator and senders, not the flooder) per event:
  // what the flood costs the aggregator, less swayed by the load than rates.
  j["ingest_alone_cpu_us_per_event"] = cpuFigures(alone_cpu);
  j["ingest_flooded_cpu_us_per_event"] = cpuFigures(flooded_cpu);
  j["ratio"] = median(ratio);  // median of each run's flooded / alone
  j["ratio_runs"] = ratio;
  j["zap_refusals_during_flood"] = refused;  // handshakes of the stranger that reached ZAP
  j["cut_on_accept_during_flood"] = cut;     // its connections cut before any handshake work
  j["flooder_cpu_s"] = flooder_cpu;          // the child's, whole run
  j["flooder_connections_during_flood"] = connections;  // sockets the stranger opened
  j["flooder_throttled_periods"] = throttled;           // 100 ms periods its bound held it back
  j["targets"] = {{"ratio", 0.8}};
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}
