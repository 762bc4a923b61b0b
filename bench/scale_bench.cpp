// A fleet of simulated nodes against one real accel-aggregatord over TCP
// loopback: steady state, the aggregator killed (SIGKILL) and restarted (the
// reconnect storm), then catch-up. Prints one line:
//   scale: nodes=N events_per_s=E lag_p99=S storm=S lost=L duplicates=D
// and a second one with the aggregator's memory and descriptors per node.
//
//   scale_bench --aggregatord PATH --nodes N [--farms F] [--steady S] [--catchup S]
//               [--down S] [--jobs-per-s R] [--heartbeat S] [--json FILE]
//
// Each simulated node is the agent's real event path: its own CURVE key on
// the aggregator's allow list, its own Outbox (spool on tmpfs, DEALER socket,
// sender and syncer threads, default link settings of accel.conf). The nodes
// live in F "farm" processes (this program again, `farm` as its first
// argument), about 1000 each. Each node sends a heartbeat every --heartbeat
// seconds (a compressed interval; random phase), and the fleet runs
// --jobs-per-s one-node jobs per second in all, each seven lifecycle events
// (prolog started and finished, step and task started, 2 s later task and
// step ended and the epilog).
//
// Measured: events_per_s is what the aggregator stored per second during the
// steady phase; lag_p99 the 99th percentile of (stored - published) over the
// events of the steady phase, from the aggregator's own database; storm the
// time from the restart until every node has its events published before the
// restart acknowledged; lost and duplicates compare what every node published
// with what the database holds, once everything is acknowledged at the end.
// Root: the fleet needs more threads than the default pid_max allows and more
// descriptors than the default soft limit; both are raised (and said).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "accel/common/clock.h"
#include "accel/common/safe_file.h"
#include "accel/events/curve_keys.h"
#include "accel/events/outbox.h"
#include "process_util.h"
#include "sim_node.h"

namespace {

using namespace std::chrono_literals;
using accel::wallNs;
using accel::support::accepts;
using accel::support::cpuSeconds;
using accel::support::footprint;
using accel::support::freePort;
using accel::support::readFile;
using accel::support::scalar;
using accel::support::spawn;
using accel::support::waitFor;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "scale_bench: %s\n", what.c_str());
  std::exit(1);
}

std::string nodeName(size_t i) {
  char name[32];
  std::snprintf(name, sizeof name, "sim%05zu", i);
  return name;
}

// ---------------------------------------------------------------- the farm

std::atomic<bool> g_snapshot{false}, g_stop{false};

// farm DIR SPOOL_ROOT FIRST COUNT ENDPOINT JOBS_PER_S HEARTBEAT_S
int farmMain(int argc, char** argv) {
  if (argc != 9) die("farm: bad arguments");
  const std::string dir = argv[2], spool_root = argv[3], endpoint = argv[6];
  const size_t first = std::stoul(argv[4]), count = std::stoul(argv[5]);
  const double jobs_per_s = std::stod(argv[7]);
  const int64_t heartbeat_ns = std::stoll(argv[8]) * 1'000'000'000;
  const std::string status = dir + "/farm" + std::to_string(first);
  signal(SIGUSR1, [](int) { g_snapshot = true; });
  signal(SIGTERM, [](int) { g_stop = true; });

  auto server = accel::event::loadPublicKey(dir + "/aggregator.pub");
  if (!server.ok()) die(server.error().message());
  std::vector<std::unique_ptr<accel::event::Outbox>> boxes;
  for (size_t i = first; i < first + count; ++i) {
    auto box = accel::bench::startSimulatedNode(nodeName(i), dir + "/keys",
                                                spool_root + "/" + nodeName(i), endpoint, *server);
    if (!box.ok()) die(box.error().message());
    boxes.push_back(std::move(*box));
  }
  (void)accel::writeFileAtomic(status + ".ready", "1\n", 0644, {},
                               accel::Durability::kProcessCrash);

  std::mt19937_64 rng(first * 7919 + 1);
  std::uniform_int_distribution<size_t> pick(0, count - 1);
  std::vector<int64_t> next_heartbeat(count);
  const int64_t start = wallNs();
  for (auto& t : next_heartbeat)
    t = start + static_cast<int64_t>(rng() % static_cast<uint64_t>(heartbeat_ns));
  struct Ending {
    int64_t due;
    size_t node;
    uint32_t job;
  };
  std::deque<Ending> endings;
  std::vector<uint32_t> job_counter(count, 0);
  double job_credit = 0;
  int64_t last = start;
  auto publish = [&](size_t n, const accel::event::Event& e) {
    if (!boxes[n]->publish(e).ok()) die(boxes[n]->node() + ": publish refused");
  };
  std::vector<uint64_t> snapshot;
  bool storm_reported = false;
  while (!g_stop) {
    std::this_thread::sleep_for(10ms);
    const int64_t now = wallNs();
    for (size_t n = 0; n < count; ++n) {
      if (now < next_heartbeat[n]) continue;
      next_heartbeat[n] += heartbeat_ns;
      publish(n, accel::event::NodeHeartbeat{
                     .accelerators = 4,
                     .accel_kind = "ipu",
                     .interval_s = static_cast<uint32_t>(heartbeat_ns / 1'000'000'000)});
    }
    job_credit += jobs_per_s * static_cast<double>(now - last) / 1e9;
    last = now;
    for (; job_credit >= 1; job_credit -= 1) {
      size_t n = pick(rng);
      // Job ids: unique across the fleet (node index, then the node's count).
      uint32_t job = static_cast<uint32_t>((first + n) * 100000 + (++job_counter[n] % 100000));
      const std::string name = boxes[n]->node();
      publish(n,
              accel::event::PrologStarted{
                  .job_id = job, .uid = 1000, .user = "sim", .node_list = name, .node_count = 1});
      publish(n,
              accel::event::PrologFinished{.job_id = job, .duration_us = 900, .accel_kind = "ipu"});
      publish(n, accel::event::StepStarted{.job_id = job, .step_id = 0, .name = "train"});
      publish(n, accel::event::TaskStarted{.job_id = job, .step_id = 0, .task_id = 0, .pid = 4242});
      endings.push_back({now + 2'000'000'000, n, job});
    }
    while (!endings.empty() && endings.front().due <= now) {
      auto [due, n, job] = endings.front();
      endings.pop_front();
      publish(n, accel::event::TaskEnded{.job_id = job, .step_id = 0, .task_id = 0});
      publish(n, accel::event::StepEnded{.job_id = job, .step_id = 0});
      publish(n, accel::event::EpilogFinished{.job_id = job, .duration_us = 700});
    }
    // The restart: from now on, has every node its earlier events acknowledged?
    if (g_snapshot.exchange(false)) {
      snapshot.clear();
      for (auto& b : boxes) snapshot.push_back(b->stats().published);
      storm_reported = false;
    }
    if (!snapshot.empty() && !storm_reported && now % 100'000'000 < 10'000'000) {
      bool all = true;
      for (size_t n = 0; n < count && all; ++n) all = boxes[n]->stats().acked >= snapshot[n];
      if (all) {
        (void)accel::writeFileAtomic(status + ".storm", std::to_string(wallNs()) + "\n", 0644, {},
                                     accel::Durability::kProcessCrash);
        storm_reported = true;
      }
    }
  }
  // The end: the endings still due are published at once, then every node
  // waits for its backlog to be acknowledged (bounded).
  for (auto& e : endings) {
    publish(e.node, accel::event::TaskEnded{.job_id = e.job, .step_id = 0, .task_id = 0});
    publish(e.node, accel::event::StepEnded{.job_id = e.job, .step_id = 0});
    publish(e.node, accel::event::EpilogFinished{.job_id = e.job, .duration_us = 700});
  }
  const int64_t limit = wallNs() + 300'000'000'000;
  while (wallNs() < limit) {
    bool empty = true;
    for (auto& b : boxes) empty = empty && b->stats().backlog == 0;
    if (empty) break;
    std::this_thread::sleep_for(100ms);
  }
  std::string out;
  for (auto& b : boxes) {
    auto s = b->stats();
    out += b->node() + " " + std::to_string(s.epoch) + " " + std::to_string(s.published) + " " +
           std::to_string(s.backlog) + " " +
           std::to_string(s.dropped_telemetry + s.dropped_lifecycle) + " " +
           std::to_string(s.attempts) + "\n";
  }
  (void)accel::writeFileAtomic(status + ".result", out, 0644, {}, accel::Durability::kProcessCrash);
  boxes.clear();
  return 0;
}

// --------------------------------------------------------- the coordinator

// Descriptors a simulated node holds in its farm: its context's and socket's
// mailboxes and pollers, its link and its spool's files (a farm of 200 nodes
// held 2,205: 11 each), with room.
constexpr uint64_t kFdsPerNode = 13;
// Descriptors of a process besides its nodes' or links: its database,
// logs, pipes and libraries.
constexpr uint64_t kFdsMargin = 256;

// Refuses to start when the descriptor limits cannot hold the fleet: a farm
// needs kFdsPerNode per node it runs, the aggregator one per node (each
// raises its soft limit to the hard one, RLIMIT_NOFILE, which children
// inherit), and the system all of them together (fs.file-max). Without this
// the fleet starts, the accepts fail with EMFILE and nothing converges.
void checkDescriptors(size_t nodes, size_t farms) {
  rlimit fd{};
  if (getrlimit(RLIMIT_NOFILE, &fd) != 0) die("getrlimit(RLIMIT_NOFILE) failed");
  const uint64_t per_farm = (nodes + farms - 1) / farms * kFdsPerNode + kFdsMargin;
  const uint64_t aggregator = nodes + kFdsMargin;
  const uint64_t need = std::max(per_farm, aggregator);
  auto limit = [](rlim_t v) {
    return v == RLIM_INFINITY ? std::string("unlimited") : std::to_string(v);
  };
  if (fd.rlim_max != RLIM_INFINITY && fd.rlim_max < need)
    die("the descriptor limit cannot hold " + std::to_string(nodes) + " nodes in " +
        std::to_string(farms) + " farms: each farm needs " + std::to_string(per_farm) +
        " and the aggregator " + std::to_string(aggregator) +
        " descriptors, but the hard limit RLIMIT_NOFILE is " + limit(fd.rlim_max) +
        " (raise it, e.g. `ulimit -n " + std::to_string(need) +
        "` as root, or LimitNOFILE=; or use more --farms)");
  const uint64_t total = uint64_t(nodes) * (kFdsPerNode + 1) + (farms + 1) * kFdsMargin;
  uint64_t file_max = std::stoull(readFile("/proc/sys/fs/file-max"));
  if (file_max < total)
    die("the system's descriptor limit fs.file-max is " + std::to_string(file_max) +
        ", the fleet " + "needs about " + std::to_string(total) +
        " (sysctl fs.file-max=" + std::to_string(total) + ")");
}

void raiseLimits(size_t nodes) {
  rlimit fd{};
  getrlimit(RLIMIT_NOFILE, &fd);
  fd.rlim_cur = fd.rlim_max;
  setrlimit(RLIMIT_NOFILE, &fd);
  // An outbox has five threads (sender, syncer, held-event retry, zmq's I/O
  // thread and reaper); the farms need them all at once.
  const uint64_t want = nodes * 6 + 8192;
  uint64_t pid_max = std::stoull(readFile("/proc/sys/kernel/pid_max"));
  if (pid_max < want) {
    std::ofstream("/proc/sys/kernel/pid_max") << want << "\n";
    std::fprintf(
        stderr,
        "scale_bench: kernel.pid_max raised from %llu to %llu for the simulated fleet's threads\n",
        static_cast<unsigned long long>(pid_max), static_cast<unsigned long long>(want));
  }
}

int coordinatorMain(int argc, char** argv) {
  std::string aggregatord, json_out;
  size_t nodes = 1000, farms = 0;
  int steady_s = 30, catchup_s = 10, down_s = 1, heartbeat_s = 10;
  double jobs_per_s = 500;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--aggregatord")
      aggregatord = value();
    else if (a == "--nodes")
      nodes = std::stoul(value());
    else if (a == "--farms")
      farms = std::stoul(value());
    else if (a == "--steady")
      steady_s = std::stoi(value());
    else if (a == "--catchup")
      catchup_s = std::stoi(value());
    else if (a == "--down")
      down_s = std::stoi(value());
    else if (a == "--jobs-per-s")
      jobs_per_s = std::stod(value());
    else if (a == "--heartbeat")
      heartbeat_s = std::stoi(value());
    else if (a == "--json")
      json_out = value();
    else
      die("unknown argument " + a);
  }
  if (aggregatord.empty() || nodes == 0)
    die("usage: scale_bench --aggregatord PATH --nodes N [...]");
  if (farms == 0) farms = (nodes + 999) / 1000;
  farms = std::min(farms, nodes);
  if (geteuid() != 0) die("run as root (pid_max and descriptor limits)");
  checkDescriptors(nodes, farms);
  raiseLimits(nodes);

  char tmpl[] = "/tmp/accel-scale-XXXXXX";
  if (!mkdtemp(tmpl)) die("mkdtemp");
  const std::string dir = tmpl;
  // Node spools on tmpfs: one machine's disk syncing ten thousand spools
  // would measure the disk, not the aggregator. The aggregator's database
  // stays on disk, fsynced as configured by default.
  const std::string spools = "/dev/shm/" + dir.substr(5);
  for (const auto& d : {dir + "/keys", dir + "/nodes"}) (void)accel::makeDirectory(d, 0700);
  (void)accel::makeDirectory(spools, 0700);
  auto server = accel::event::generateCurveKeyPair();
  if (!server.ok() || !accel::event::writeKeyPair(dir + "/aggregator", *server).ok())
    die("server keys");
  for (size_t i = 0; i < nodes; ++i) {
    auto keys = accel::event::generateCurveKeyPair();
    if (!keys.ok() || !accel::event::writeKeyPair(dir + "/keys/" + nodeName(i), *keys).ok())
      die("node keys");
    std::ofstream(dir + "/nodes/" + nodeName(i) + ".pub") << keys->public_key << "\n";
  }
  const uint16_t port = freePort();
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(port);
  std::ofstream(dir + "/agg.conf")
      << "Listen=" << endpoint << "\nSecretKeyFile=" << dir
      << "/aggregator.key\nAllowListDir=" << dir << "/nodes\nDatabase=" << dir
      << "/events.db\nWriteComments=no\nLogLevel=warning\n"
      // The whole fleet comes from 127.0.0.1: no bound per source address.
      << "ConnectionsPerAddress=0\n";
  auto startAggregator = [&] {
    pid_t pid = spawn({aggregatord, "--config", dir + "/agg.conf"}, dir + "/aggregator.log");
    if (!waitFor([&] { return accepts(port); }, 60s))
      die("the aggregator does not listen; see " + dir);
    return pid;
  };
  pid_t agg = startAggregator();
  auto [rss0, fds0] = footprint(agg);

  std::vector<pid_t> farm_pids;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  std::vector<size_t> firsts;
  for (size_t f = 0, first = 0; f < farms; ++f) {
    size_t count = nodes / farms + (f < nodes % farms ? 1 : 0);
    firsts.push_back(first);
    farm_pids.push_back(
        spawn({self, "farm", dir, spools, std::to_string(first), std::to_string(count), endpoint,
               std::to_string(jobs_per_s * static_cast<double>(count) / static_cast<double>(nodes)),
               std::to_string(heartbeat_s)},
              dir + "/farm" + std::to_string(first) + ".log"));
    first += count;
  }
  auto exists = [](const std::string& p) { return access(p.c_str(), F_OK) == 0; };
  if (!waitFor(
          [&] {
            return std::all_of(firsts.begin(), firsts.end(), [&](size_t f) {
              return exists(dir + "/farm" + std::to_string(f) + ".ready");
            });
          },
          600s))
    die("the farms did not start; see " + dir);
  std::fprintf(stderr, "scale_bench: %zu nodes in %zu farms started\n", nodes, farms);
  // Steady state, once every node had the time to connect.
  std::this_thread::sleep_for(std::chrono::seconds(std::max(5, heartbeat_s)));
  const int64_t steady_start = wallNs();
  const double cpu_start = cpuSeconds(agg);
  std::this_thread::sleep_for(std::chrono::seconds(steady_s));
  const int64_t steady_end = wallNs();
  const double cpu_steady =
      (cpuSeconds(agg) - cpu_start) * 1e9 / static_cast<double>(steady_end - steady_start);
  auto [rss1, fds1] = footprint(agg);

  // The storm.
  kill(agg, SIGKILL);
  waitpid(agg, nullptr, 0);
  std::this_thread::sleep_for(std::chrono::seconds(down_s));
  const int64_t restart = wallNs();
  agg = spawn({aggregatord, "--config", dir + "/agg.conf"}, dir + "/aggregator.log");
  for (pid_t p : farm_pids) kill(p, SIGUSR1);
  double storm_s = -1;
  if (waitFor(
          [&] {
            return std::all_of(firsts.begin(), firsts.end(), [&](size_t f) {
              return exists(dir + "/farm" + std::to_string(f) + ".storm");
            });
          },
          600s)) {
    int64_t last = 0;
    for (size_t f : firsts)
      last = std::max<int64_t>(last,
                               std::stoll(readFile(dir + "/farm" + std::to_string(f) + ".storm")));
    storm_s = static_cast<double>(last - restart) / 1e9;
  }
  std::this_thread::sleep_for(std::chrono::seconds(catchup_s));
  auto [rss2, fds2] = footprint(agg);

  // The end: every farm drains its nodes and reports.
  for (pid_t p : farm_pids) kill(p, SIGTERM);
  for (pid_t p : farm_pids) waitpid(p, nullptr, 0);
  kill(agg, SIGTERM);
  waitpid(agg, nullptr, 0);
  uint64_t published = 0, backlog = 0, dropped = 0, attempts = 0;
  for (size_t f : firsts) {
    std::istringstream in(readFile(dir + "/farm" + std::to_string(f) + ".result"));
    std::string node;
    uint64_t epoch, p, b, d, a;
    while (in >> node >> epoch >> p >> b >> d >> a)
      published += p, backlog += b, dropped += d, attempts += a;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2((dir + "/events.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK)
    die("database");
  const int64_t stored = scalar(db, "SELECT count(*) FROM events");
  const int64_t distinct =
      scalar(db, "SELECT count(*) FROM (SELECT DISTINCT node, epoch, seq FROM events)");
  const std::string window = " FROM events WHERE received_ns BETWEEN " +
                             std::to_string(steady_start) + " AND " + std::to_string(steady_end);
  const int64_t in_window = scalar(db, "SELECT count(*)" + window);
  const int64_t lag_p99_ns =
      scalar(db, "SELECT received_ns - time_ns" + window + " ORDER BY 1 LIMIT 1 OFFSET " +
                     std::to_string(std::max<int64_t>(0, in_window * 99 / 100 - 1)));
  sqlite3_close(db);
  const double events_per_s =
      static_cast<double>(in_window) * 1e9 / static_cast<double>(steady_end - steady_start);
  const int64_t lost = static_cast<int64_t>(published) - distinct;
  const int64_t duplicates = stored - distinct;

  std::printf(
      "scale: nodes=%zu events_per_s=%.0f lag_p99=%.3f storm=%.1f lost=%lld duplicates=%lld\n",
      nodes, events_per_s, static_cast<double>(lag_p99_ns) / 1e9, storm_s,
      static_cast<long long>(lost), static_cast<long long>(duplicates));
  const double per_node_kib =
      static_cast<double>(rss1 - std::min(rss1, rss0)) / static_cast<double>(nodes);
  const double per_node_fds =
      static_cast<double>(fds1 - std::min(fds1, fds0)) / static_cast<double>(nodes);
  std::printf(
      "scale: aggregator rss=%llu KiB (%llu idle, %.1f KiB per node) fds=%llu (%llu idle, %.2f per "
      "node); "
      "after the storm rss=%llu KiB fds=%llu; steady cpu=%.2f cores; published=%llu "
      "left_unacked=%llu dropped=%llu attempts=%llu\n",
      static_cast<unsigned long long>(rss1), static_cast<unsigned long long>(rss0), per_node_kib,
      static_cast<unsigned long long>(fds1), static_cast<unsigned long long>(fds0), per_node_fds,
      static_cast<unsigned long long>(rss2), static_cast<unsigned long long>(fds2), cpu_steady,
      static_cast<unsigned long long>(published), static_cast<unsigned long long>(backlog),
      static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(attempts));
  if (!json_out.empty()) {
    nlohmann::json j = {{"nodes", nodes},
                        {"farms", farms},
                        {"steady_s", steady_s},
                        {"jobs_per_s", jobs_per_s},
                        {"heartbeat_s", heartbeat_s},
                        {"events_per_s", events_per_s},
                        {"lag_p99_s", static_cast<double>(lag_p99_ns) / 1e9},
                        {"storm_s", storm_s},
                        {"lost", lost},
                        {"duplicates", duplicates},
                        {"published", published},
                        {"left_unacked", backlog},
                        {"dropped", dropped},
                        {"attempts", attempts},
                        {"rss_idle_kib", rss0},
                        {"rss_kib", rss1},
                        {"rss_after_storm_kib", rss2},
                        {"fds_idle", fds0},
                        {"fds", fds1},
                        {"fds_after_storm", fds2},
                        {"rss_per_node_kib", per_node_kib},
                        {"fds_per_node", per_node_fds},
                        {"cpu_steady_cores", cpu_steady}};
    std::ofstream(json_out) << j.dump(2) << "\n";
  }
  (void)accel::removeTree(spools);
  if (lost == 0 && duplicates == 0 && backlog == 0)
    (void)accel::removeTree(dir);
  else
    std::fprintf(stderr, "scale_bench: kept %s for inspection\n", dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "farm") return farmMain(argc, argv);
  return coordinatorMain(argc, argv);
}
