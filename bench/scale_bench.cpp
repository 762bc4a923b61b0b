// A fleet of simulated nodes against one real accel-aggregatord over TCP
// loopback: steady state, the aggregator killed (SIGKILL) and restarted (the
// reconnect storm), then catch-up. Prints one line:
//   scale: nodes=N events_per_s=E lag_p99=S storm=S lost=L duplicates=D links_up=U
//          sim_links_up=V sim_cpu=C link_p50=S link_p99=S
// a second one with the aggregator's memory and descriptors per node, and a
// third with the links and the simulator's own CPU.
//
//   scale_bench --aggregatord PATH --nodes N [--farms F] [--steady S] [--catchup S]
//               [--down S] [--jobs-per-s R] [--heartbeat S] [--json FILE]
//               [--aggregator-set KEY=VALUE]... [--farm-nice N]
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
// At the end of the steady phase: links_up is the aggregator's count of node
// connections (its accel_aggregator_nodes_connected), sim_links_up the
// outboxes whose link is up as the farms see it; sim_cpu the farms' CPU over
// the steady phase in cores (what the simulator takes from the machine the
// aggregator runs on); link_p50/p99 the time from an outbox's start to the end
// of its first CURVE handshake, over the nodes (LinkWatch, 50 ms steps).
// The farms run at nice --farm-nice (default 19): the nodes stand for other
// machines, and 50,000 runnable threads at the aggregator's priority would
// starve its three (the CPU it would lose to them is not a site's). Their
// own CPU is still measured and reported (sim_cpu). Steady state begins once
// the aggregator counts every node connected (at most 120 s after the farms
// are up; converge_s says when), then one heartbeat interval later.
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
#include "sim_links.h"
#include "sim_node.h"

namespace {

using namespace std::chrono_literals;
using accel::wallNs;
using accel::bench::aggregatorLinks;
using accel::bench::askFarmsForLinks;
using accel::bench::FleetLinks;
using accel::bench::quantile;
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

std::atomic<bool> g_snapshot{false}, g_links{false}, g_stop{false};

// farm DIR SPOOL_ROOT FIRST COUNT ENDPOINT JOBS_PER_S HEARTBEAT_S NICE
int farmMain(int argc, char** argv) {
  if (argc != 10) die("farm: bad arguments");
  // Before any thread: the outboxes' threads inherit it.
  if (setpriority(PRIO_PROCESS, 0, std::stoi(argv[9])) != 0) die("farm: setpriority failed");
  const std::string dir = argv[2], spool_root = argv[3], endpoint = argv[6];
  const size_t first = std::stoul(argv[4]), count = std::stoul(argv[5]);
  const double jobs_per_s = std::stod(argv[7]);
  const int64_t heartbeat_ns = std::stoll(argv[8]) * 1'000'000'000;
  const std::string status = dir + "/farm" + std::to_string(first);
  signal(SIGUSR1, [](int) { g_snapshot = true; });
  signal(SIGUSR2, [](int) { g_links = true; });
  signal(SIGTERM, [](int) { g_stop = true; });

  auto server = accel::event::loadPublicKey(dir + "/aggregator.pub");
  if (!server.ok()) die(server.error().message());
  std::vector<std::unique_ptr<accel::event::Outbox>> boxes;
  auto links = std::make_unique<accel::bench::LinkWatch>(count);
  for (size_t i = first; i < first + count; ++i) {
    const int64_t started = accel::monoNs();
    auto box = accel::bench::startSimulatedNode(nodeName(i), dir + "/keys",
                                                spool_root + "/" + nodeName(i), endpoint, *server);
    if (!box.ok()) die(box.error().message());
    links->add(box->get(), started);
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
    if (g_links.exchange(false))
      (void)accel::writeFileAtomic(status + ".links", links->report(), 0644, {},
                                   accel::Durability::kProcessCrash);
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
  links.reset();  // before the outboxes it reads
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

// Dies when the aggregator has ended by itself: the figures of a fleet
// talking to nothing would mean nothing. The farms are ended first.
void checkAlive(pid_t agg, const std::string& when, const std::string& dir,
                const std::vector<pid_t>& farms) {
  int st = 0;
  if (waitpid(agg, &st, WNOHANG) != agg) return;
  for (pid_t p : farms) kill(p, SIGKILL);
  for (pid_t p : farms) waitpid(p, nullptr, 0);
  die("the aggregator ended " + when + " (" +
      (WIFSIGNALED(st) ? "signal " + std::to_string(WTERMSIG(st))
                       : "status " + std::to_string(WEXITSTATUS(st))) +
      "); see " + dir + "/aggregator.log");
}

double cpuSeconds(const std::vector<pid_t>& pids) {
  double sum = 0;
  for (pid_t p : pids) sum += cpuSeconds(p);
  return sum;
}

int coordinatorMain(int argc, char** argv) {
  std::string aggregatord, json_out, extra_conf;
  size_t nodes = 1000, farms = 0;
  int steady_s = 30, catchup_s = 10, down_s = 1, heartbeat_s = 10, farm_nice = 19;
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
    else if (a == "--farm-nice")
      farm_nice = std::stoi(value());
    else if (a == "--aggregator-set")  // a line of its accel-aggregator.conf, for comparisons
      extra_conf += value() + "\n";
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
  uint16_t metrics_port = freePort();
  while (metrics_port == port) metrics_port = freePort();
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(port);
  std::ofstream(dir + "/agg.conf")
      << "Listen=" << endpoint << "\nSecretKeyFile=" << dir
      << "/aggregator.key\nAllowListDir=" << dir << "/nodes\nDatabase=" << dir
      << "/events.db\nWriteComments=no\nLogLevel=warning\n"
      // The whole fleet comes from 127.0.0.1: no bound per source address.
      << "ConnectionsPerAddress=0\nMetricsAddress=127.0.0.1:" << metrics_port << "\n"
      << extra_conf;
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
               std::to_string(heartbeat_s), std::to_string(farm_nice)},
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
  // Steady state: once the aggregator counts every node connected (or after
  // 120 s: then links_up says how far it got), and a heartbeat interval more
  // for the backlog of the connecting phase to drain.
  const int64_t farms_up = wallNs();
  double converge_s = -1;
  // Scraped once a second: a scrape renders every node's lines.
  for (int i = 0; i < 120 && converge_s < 0; ++i) {
    if (aggregatorLinks(metrics_port) >= int64_t(nodes))
      converge_s = static_cast<double>(wallNs() - farms_up) / 1e9;
    else
      std::this_thread::sleep_for(1s);
  }
  std::this_thread::sleep_for(std::chrono::seconds(std::max(5, heartbeat_s)));
  const int64_t steady_start = wallNs();
  const double cpu_start = cpuSeconds(agg), sim_cpu_start = cpuSeconds(farm_pids);
  std::this_thread::sleep_for(std::chrono::seconds(steady_s));
  const int64_t steady_end = wallNs();
  const double steady_ns = static_cast<double>(steady_end - steady_start);
  const double cpu_steady = (cpuSeconds(agg) - cpu_start) * 1e9 / steady_ns;
  const double sim_cpu = (cpuSeconds(farm_pids) - sim_cpu_start) * 1e9 / steady_ns;
  checkAlive(agg, "during the steady state", dir, farm_pids);
  auto [rss1, fds1] = footprint(agg);
  const int64_t links_up = aggregatorLinks(metrics_port);
  const FleetLinks sim_links = askFarmsForLinks(dir, firsts, farm_pids);
  const double link_p50 = quantile(sim_links.first_link_s, 0.50),
               link_p99 = quantile(sim_links.first_link_s, 0.99),
               link_max = quantile(sim_links.first_link_s, 1.0);

  // The storm.
  kill(agg, SIGKILL);
  waitpid(agg, nullptr, 0);
  std::this_thread::sleep_for(std::chrono::seconds(down_s));
  const int64_t restart = wallNs();
  agg = spawn({aggregatord, "--config", dir + "/agg.conf"}, dir + "/aggregator.log");
  for (pid_t p : farm_pids) kill(p, SIGUSR1);
  // How long the restarted aggregator takes to listen again (opening its
  // database): the nodes' attempts meanwhile are refused, and each refusal
  // doubles their back-off.
  double relisten_s = -1;
  if (waitFor([&] { return accepts(port); }, 60s))
    relisten_s = static_cast<double>(wallNs() - restart) / 1e9;
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
  checkAlive(agg, "after its restart", dir, farm_pids);
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
      "scale: nodes=%zu events_per_s=%.0f lag_p99=%.3f storm=%.1f lost=%lld duplicates=%lld "
      "links_up=%lld sim_links_up=%zu sim_cpu=%.2f link_p50=%.3f link_p99=%.3f converge=%.1f\n",
      nodes, events_per_s, static_cast<double>(lag_p99_ns) / 1e9, storm_s,
      static_cast<long long>(lost), static_cast<long long>(duplicates),
      static_cast<long long>(links_up), sim_links.up, sim_cpu, link_p50, link_p99, converge_s);
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
  std::printf(
      "scale: at the end of the steady phase the aggregator counted %lld node connections, the "
      "farms %zu links up (%zu farms of %zu answered, %zu nodes never linked); first link "
      "p50=%.3f s p99=%.3f s max=%.3f s; simulator cpu=%.2f cores, aggregator %.2f; the "
      "restarted aggregator listened after %.1f s\n",
      static_cast<long long>(links_up), sim_links.up, sim_links.farms_answered, farms,
      sim_links.never, link_p50, link_p99, link_max, sim_cpu, cpu_steady, relisten_s);
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
                        {"cpu_steady_cores", cpu_steady},
                        {"links_up", links_up},
                        {"sim_links_up", sim_links.up},
                        {"sim_never_linked", sim_links.never},
                        {"sim_cpu_steady_cores", sim_cpu},
                        {"first_link_p50_s", link_p50},
                        {"first_link_p99_s", link_p99},
                        {"first_link_max_s", link_max},
                        {"converge_s", converge_s},
                        {"relisten_s", relisten_s},
                        {"farm_nice", farm_nice}};
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
