// Accounting at rate: job summaries written by a real accel-aggregatord into
// the real slurmdbd of a sandbox. Prints one line per pass and a JSON file:
//   accounting: pass=P jobs=J requeued=Q written_per_s=W drain=S pending_peak=K
//               sacct_p50=MS sacct_max=MS correct=C wrong=X
//
//   accounting_bench --aggregatord PATH --slurm-conf FILE --cluster NAME --jobs-file FILE
//                    [--nodes N] [--jobs-per-s R] [--requeue-every K] [--requeue-after S]
//                    [--writes-per-s W] [--batch B] [--connections C] [--json FILE]
//
// The jobs are real: --jobs-file lists the ids of jobs slurmdbd has records
// of (bench/accounting submits them to the sandbox and cancels them). The
// bench plays N nodes, each the agent's real event path (its own CURVE key on
// the aggregator's allow list, its own Outbox and spool, over TCP loopback),
// that run those jobs one node each: seven lifecycle events a job, R jobs
// ending per second in all. Every K-th job is requeued: S seconds after its
// first run ended, a second run (SLURM_JOB_RESTART_COUNT=1) runs on the next
// node. Two passes, each with an aggregator and database of its own:
//  - capacity: the aggregator queues every summary without writing
//    (WriteComments=no); once all are queued it is restarted writing, with no
//    rate limit worth the name (CommentWritesPerSecond=100000): how fast
//    slurmdbd takes them, batches of B;
//  - at rate: writing from the start at W jobs/s in batches of B (the
//    shipped defaults unless given); the aggregator is killed (SIGKILL) when
//    half the queue is written and restarted a second later. drain is the
//    time from the last epilog published to an empty queue.
// During each drain a probe runs `sacct` for one job every 500 ms: how
// slurmdbd answers others while it takes the writes, against the same probe
// on the idle system before the passes.
// After each pass every job's AdminComment is read back from slurmdbd: it
// must hold exactly one accel segment, with the pass's accelerator kind, the
// nodes of its runs, result ok, and "restarts":1 exactly when requeued.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accel/common/clock.h"
#include "accel/common/safe_file.h"
#include "accel/events/curve_keys.h"
#include "accel/events/outbox.h"
#include "accel/ipc/admin_comment.h"
#include "accel/slurm/slurmdb_accounting.h"
#include "process_util.h"
#include "sim_node.h"

namespace {

using namespace std::chrono_literals;
using accel::wallNs;
using namespace accel::support;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "accounting_bench: %s\n", what.c_str());
  std::exit(1);
}

struct Options {
  std::string aggregatord, slurm_conf, cluster, jobs_file, json_out;
  size_t nodes = 100;
  double jobs_per_s = 500;
  size_t requeue_every = 10;
  int requeue_after_s = 2;
  uint32_t writes_per_s = 0;  // 0: the aggregator's default
  uint32_t batch = 0;         // 0: the aggregator's default
  uint32_t connections = 0;   // 0: the aggregator's default
};

std::string nodeName(size_t i) {
  char name[32];
  std::snprintf(name, sizeof name, "acct%03zu", i);
  return name;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// `sacct` for one job, run every 500 ms while `on`: milliseconds each.
class SacctProbe {
 public:
  SacctProbe(std::string slurm_conf, uint32_t job) : conf_(std::move(slurm_conf)), job_(job) {}
  double once() const {
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid == 0) {
      setenv("SLURM_CONF", conf_.c_str(), 1);
      int null = ::open("/dev/null", O_WRONLY);
      dup2(null, 1), dup2(null, 2);
      execlp("sacct", "sacct", "-n", "-X", "-P", "-o", "JobID,AdminComment", "-j",
             std::to_string(job_).c_str(), nullptr);
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("sacct failed; is the sandbox up?");
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  void start() {
    on_ = true;
    thread_ = std::thread([this] {
      while (on_) {
        double ms = once();
        std::lock_guard g(mu_);
        ms_.push_back(ms);
        std::this_thread::sleep_for(500ms);
      }
    });
  }
  std::vector<double> stop() {
    on_ = false;
    if (thread_.joinable()) thread_.join();
    std::lock_guard g(mu_);
    return std::exchange(ms_, {});
  }

 private:
  std::string conf_;
  uint32_t job_;
  std::atomic<bool> on_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<double> ms_;
};

// The simulated nodes: keys, spools and outboxes.
class Fleet {
 public:
  Fleet(const std::string& dir, size_t n, const std::string& endpoint) {
    auto server = accel::event::loadPublicKey(dir + "/aggregator.pub");
    if (!server.ok()) die(server.error().message());
    for (size_t i = 0; i < n; ++i) {
      auto box = accel::bench::startSimulatedNode(nodeName(i), dir + "/keys",
                                                  dir + "/spool/" + nodeName(i), endpoint, *server);
      if (!box.ok()) die(box.error().message());
      boxes_.push_back(std::move(*box));
    }
  }
  void publish(size_t n, const accel::event::Event& e) {
    if (!boxes_[n]->publish(e).ok()) die(boxes_[n]->node() + ": publish refused");
  }
  bool drained() const {
    return std::all_of(boxes_.begin(), boxes_.end(),
                       [](const auto& b) { return b->stats().backlog == 0; });
  }
  size_t size() const { return boxes_.size(); }

 private:
  std::vector<std::unique_ptr<accel::event::Outbox>> boxes_;
};

// One run of a job on one node, as the agent reports it.
void runJob(Fleet& fleet, size_t node, uint32_t job, uint32_t restart, const std::string& kind) {
  using namespace accel::event;
  const std::string name = nodeName(node);
  fleet.publish(node, PrologStarted{.job_id = job,
                                    .uid = 1000,
                                    .user = "sim",
                                    .node_list = name,
                                    .node_count = 1,
                                    .restart_count = restart});
  fleet.publish(
      node,
      PrologFinished{.job_id = job, .devices = {"0", "1"}, .duration_us = 900, .accel_kind = kind});
  fleet.publish(node, StepStarted{.job_id = job, .step_id = 0, .name = "train"});
  fleet.publish(node, TaskStarted{.job_id = job, .step_id = 0, .task_id = 0, .pid = 4242});
  fleet.publish(node, TaskEnded{.job_id = job, .step_id = 0, .task_id = 0});
  fleet.publish(node, StepEnded{.job_id = job, .step_id = 0});
  fleet.publish(node, EpilogFinished{.job_id = job, .duration_us = 700, .restart_count = restart});
}

struct PassResult {
  std::string name;
  double written_per_s = 0, drain_s = 0;
  int64_t pending_peak = 0;
  std::vector<double> sacct_ms;
  size_t correct = 0, wrong = 0;
  std::vector<std::string> wrong_examples;
  std::string dir;  // the pass's aggregator, database and spools
};

// A pass's directory goes once its fleet has stopped; kept to be looked at
// when something was wrong, or with ACCEL_BENCH_KEEP.
void tidy(const PassResult& r) {
  if (r.wrong == 0 && !std::getenv("ACCEL_BENCH_KEEP")) (void)accel::removeTree(r.dir);
}

class Bench {
 public:
  explicit Bench(Options o) : o_(std::move(o)) {
    std::ifstream in(o_.jobs_file);
    for (uint32_t id; in >> id;) jobs_.push_back(id);
    if (jobs_.empty()) die("no job ids in " + o_.jobs_file);
    accounting_ = std::make_unique<accel::slurm::SlurmdbAccounting>(o_.cluster, o_.slurm_conf);
  }

  int run() {
    SacctProbe probe(o_.slurm_conf, jobs_.front());
    std::vector<double> idle;
    for (int i = 0; i < 20; ++i) idle.push_back(probe.once()), std::this_thread::sleep_for(100ms);
    std::printf("accounting: idle sacct_p50=%.1f sacct_max=%.1f\n", percentile(idle, 0.5),
                percentile(idle, 1.0));
    auto capacity = pass("capacity", "gpu", probe);
    tidy(capacity);
    auto rate = pass("rate", "ipu", probe);
    tidy(rate);
    nlohmann::json j;
    j["jobs"] = jobs_.size();
    j["requeued"] = requeued();
    j["nodes"] = o_.nodes;
    j["jobs_per_s"] = o_.jobs_per_s;
    j["idle_sacct_ms"] = {{"p50", percentile(idle, 0.5)}, {"max", percentile(idle, 1.0)}};
    for (const auto& r : {capacity, rate})
      j["passes"][r.name] = {
          {"written_per_s", r.written_per_s},
          {"drain_s", r.drain_s},
          {"pending_peak", r.pending_peak},
          {"sacct_ms",
           {{"p50", percentile(r.sacct_ms, 0.5)}, {"max", percentile(r.sacct_ms, 1.0)}}},
          {"correct", r.correct},
          {"wrong", r.wrong},
          {"wrong_examples", r.wrong_examples}};
    j["writes_per_s"] = o_.writes_per_s;
    j["batch"] = o_.batch;
    j["connections"] = o_.connections;
    if (!o_.json_out.empty()) std::ofstream(o_.json_out) << j.dump(2) << "\n";
    return capacity.wrong == 0 && rate.wrong == 0 ? 0 : 1;
  }

 private:
  size_t requeued() const { return o_.requeue_every ? jobs_.size() / o_.requeue_every : 0; }
  bool isRequeued(size_t i) const { return o_.requeue_every && (i + 1) % o_.requeue_every == 0; }

  // A fresh directory, keys and config; returns the aggregator's config path.
  std::string prepare(const std::string& name, uint16_t port) {
    char tmpl[] = "/tmp/accel-acct-XXXXXX";
    if (!mkdtemp(tmpl)) die("mkdtemp");
    dir_ = tmpl;
    for (const auto& d : {dir_ + "/keys", dir_ + "/nodes", dir_ + "/spool"})
      (void)accel::makeDirectory(d, 0700);
    auto server = accel::event::generateCurveKeyPair();
    if (!server.ok() || !accel::event::writeKeyPair(dir_ + "/aggregator", *server).ok())
      die("server keys");
    for (size_t i = 0; i < o_.nodes; ++i) {
      auto keys = accel::event::generateCurveKeyPair();
      if (!keys.ok() || !accel::event::writeKeyPair(dir_ + "/keys/" + nodeName(i), *keys).ok())
        die("node keys");
      std::ofstream(dir_ + "/nodes/" + nodeName(i) + ".pub") << keys->public_key << "\n";
    }
    endpoint_ = "tcp://127.0.0.1:" + std::to_string(port);
    metrics_port_ = freePort();
    std::fprintf(stderr, "accounting_bench: pass %s in %s\n", name.c_str(), dir_.c_str());
    return dir_ + "/agg.conf";
  }
  void writeConfig(bool write, uint32_t rate, uint32_t batch) {
    std::ofstream c(dir_ + "/agg.conf");
    c << "Listen=" << endpoint_ << "\nSecretKeyFile=" << dir_
      << "/aggregator.key\nAllowListDir=" << dir_ << "/nodes\nDatabase=" << dir_
      << "/events.db\nMetricsAddress=127.0.0.1:" << metrics_port_
      << "\nWriteComments=" << (write ? "yes" : "no") << "\nClusterName=" << o_.cluster
      << "\nSlurmConf=" << o_.slurm_conf << "\nLogLevel=warning\n";
    if (rate) c << "CommentWritesPerSecond=" << rate << "\n";
    if (batch) c << "CommentBatchSize=" << batch << "\n";
    if (o_.connections) c << "CommentConnections=" << o_.connections << "\n";
  }
  pid_t startAggregator(uint16_t port) {
    pid_t pid = spawn({o_.aggregatord, "--config", dir_ + "/agg.conf"}, dir_ + "/aggregator.log");
    if (!waitFor([&] { return accepts(port); }, 60s))
      die("the aggregator does not listen; see " + dir_);
    return pid;
  }
  void stopAggregator(pid_t pid, int sig) {
    kill(pid, sig);
    waitpid(pid, nullptr, 0);
  }
  int64_t count(const std::string& sql) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2((dir_ + "/events.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
        SQLITE_OK) {
      sqlite3_close(db);
      return -1;
    }
    sqlite3_busy_timeout(db, 5000);
    int64_t n = scalar(db, sql);
    sqlite3_close(db);
    return n;
  }
  int64_t pending() { return count("SELECT count(*) FROM pending_comments"); }
  int64_t waiting() { return count("SELECT count(*) FROM summary_waits"); }

  // Publishes every job's runs at the pass's pace; returns when the last
  // epilog is published (the fleet may still be sending).
  int64_t publishAll(Fleet& fleet, const std::string& kind, PassResult& r) {
    struct Rerun {
      int64_t due;
      size_t index;
    };
    std::deque<Rerun> reruns;
    size_t next = 0;
    double credit = 0;
    int64_t last = wallNs(), last_epilog = 0;
    while (next < jobs_.size() || !reruns.empty()) {
      std::this_thread::sleep_for(10ms);
      const int64_t now = wallNs();
      credit += o_.jobs_per_s * static_cast<double>(now - last) / 1e9;
      last = now;
      for (; credit >= 1 && next < jobs_.size(); credit -= 1, ++next) {
        runJob(fleet, next % fleet.size(), jobs_[next], 0, kind);
        if (isRequeued(next)) reruns.push_back({now + o_.requeue_after_s * 1'000'000'000LL, next});
        last_epilog = wallNs();
      }
      while (!reruns.empty() && reruns.front().due <= now) {
        size_t i = reruns.front().index;
        reruns.pop_front();
        runJob(fleet, (i + 1) % fleet.size(), jobs_[i], 1, kind);
        last_epilog = wallNs();
      }
      r.pending_peak = std::max(r.pending_peak, pending());
    }
    return last_epilog;
  }

  PassResult pass(const std::string& name, const std::string& kind, SacctProbe& probe) {
    PassResult r;
    r.name = name;
    const uint16_t port = freePort();
    prepare(name, port);
    r.dir = dir_;
    const bool capacity = name == "capacity";
    writeConfig(!capacity, capacity ? 100000 : o_.writes_per_s, o_.batch);
    pid_t agg = startAggregator(port);
    Fleet fleet(dir_, o_.nodes, endpoint_);
    if (!capacity) probe.start();
    const int64_t first_end = wallNs();
    const int64_t last_epilog = publishAll(fleet, kind, r);
    const int64_t jobs = static_cast<int64_t>(jobs_.size());
    if (capacity) {
      // Everything queued, nothing written; then the aggregator writes.
      if (!waitFor([&] { return fleet.drained() && waiting() == 0 && pending() == jobs; }, 600s))
        die("capacity: not every summary was queued; see " + dir_);
      r.pending_peak = jobs;
      stopAggregator(agg, SIGTERM);
      writeConfig(true, 100000, o_.batch);
      probe.start();
      const int64_t t0 = wallNs();
      agg = startAggregator(port);
      if (!waitFor([&] { return pending() == 0; }, 1800s))
        die("capacity: the queue did not drain; see " + dir_);
      r.drain_s = static_cast<double>(wallNs() - t0) / 1e9;
      r.written_per_s = static_cast<double>(jobs) / r.drain_s;
    } else {
      // Killed when half the queue is written, once the queue is past its peak.
      bool killed = false;
      if (!waitFor(
              [&] {
                int64_t p = pending();
                r.pending_peak = std::max(r.pending_peak, p);
                if (!killed && fleet.drained() && p >= 0 && p <= r.pending_peak / 2) {
                  stopAggregator(agg, SIGKILL);
                  std::this_thread::sleep_for(1s);
                  agg = startAggregator(port);
                  killed = true;
                }
                return killed && fleet.drained() && waiting() == 0 && p == 0;
              },
              1800s))
        die("rate: the queue did not drain; see " + dir_);
      const int64_t end = wallNs();
      r.drain_s = static_cast<double>(end - last_epilog) / 1e9;
      // Jobs per second from the first job's end to the empty queue.
      r.written_per_s = static_cast<double>(jobs) / (static_cast<double>(end - first_end) / 1e9);
    }
    r.sacct_ms = probe.stop();
    verify(kind, r);
    stopAggregator(agg, SIGTERM);
    std::printf(
        "accounting: pass=%s jobs=%zu requeued=%zu written_per_s=%.0f drain=%.1f pending_peak=%lld "
        "sacct_p50=%.1f sacct_max=%.1f correct=%zu wrong=%zu\n",
        name.c_str(), jobs_.size(), requeued(), r.written_per_s, r.drain_s,
        static_cast<long long>(r.pending_peak), percentile(r.sacct_ms, 0.5),
        percentile(r.sacct_ms, 1.0), r.correct, r.wrong);
    for (const auto& w : r.wrong_examples) std::printf("accounting: wrong: %s\n", w.c_str());
    std::fflush(stdout);
    return r;
  }

  // Every job's comment, read back from slurmdbd.
  void verify(const std::string& kind, PassResult& r) {
    for (size_t from = 0; from < jobs_.size(); from += 500) {
      std::vector<uint32_t> ids(
          jobs_.begin() + static_cast<long>(from),
          jobs_.begin() + static_cast<long>(std::min(jobs_.size(), from + 500)));
      auto comments = accounting_->adminComments(ids);
      if (!comments.ok()) die("reading the comments back: " + comments.error().message());
      for (size_t k = 0; k < ids.size(); ++k) {
        const size_t i = from + k;
        auto it = comments->find(ids[k]);
        std::string why =
            check(i, kind, it == comments->end() ? nullptr : &it->second.admin_comment);
        if (why.empty()) {
          ++r.correct;
        } else {
          ++r.wrong;
          if (r.wrong_examples.size() < 5)
            r.wrong_examples.push_back("job " + std::to_string(ids[k]) + ": " + why);
        }
      }
    }
  }
  std::string check(size_t i, const std::string& kind, const std::string* comment) {
    if (!comment) return "no record in slurmdbd";
    size_t segments = 0;
    for (size_t at = 0; (at = comment->find("accel=", at)) != std::string::npos; at += 6)
      ++segments;
    if (segments != 1) return std::to_string(segments) + " accel segments: " + *comment;
    auto j = nlohmann::json::parse(accel::ipc::extractAccelSegment(*comment), nullptr, false);
    if (j.is_discarded()) return "segment is not JSON: " + *comment;
    std::set<std::string> nodes{nodeName(i % o_.nodes)};
    if (isRequeued(i)) nodes.insert(nodeName((i + 1) % o_.nodes));
    const bool ok = j.value("v", 0) == 1 && j.value("result", "") == "ok" &&
                    j.value("accel", "") == kind && j.value("count", 0) == 2 &&
                    j.value("nodes", std::set<std::string>{}) == nodes &&
                    !j.contains("missing_nodes") &&
                    (isRequeued(i) ? j.value("restarts", 0) == 1 : !j.contains("restarts"));
    return ok ? "" : "unexpected summary: " + *comment;
  }

  Options o_;
  std::vector<uint32_t> jobs_;
  std::unique_ptr<accel::slurm::SlurmdbAccounting> accounting_;
  std::string dir_, endpoint_;
  uint16_t metrics_port_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--aggregatord")
      o.aggregatord = value();
    else if (a == "--slurm-conf")
      o.slurm_conf = value();
    else if (a == "--cluster")
      o.cluster = value();
    else if (a == "--jobs-file")
      o.jobs_file = value();
    else if (a == "--nodes")
      o.nodes = std::stoul(value());
    else if (a == "--jobs-per-s")
      o.jobs_per_s = std::stod(value());
    else if (a == "--requeue-every")
      o.requeue_every = std::stoul(value());
    else if (a == "--requeue-after")
      o.requeue_after_s = std::stoi(value());
    else if (a == "--writes-per-s")
      o.writes_per_s = static_cast<uint32_t>(std::stoul(value()));
    else if (a == "--batch")
      o.batch = static_cast<uint32_t>(std::stoul(value()));
    else if (a == "--connections")
      o.connections = static_cast<uint32_t>(std::stoul(value()));
    else if (a == "--json")
      o.json_out = value();
    else
      die("unknown argument " + a);
  }
  if (o.aggregatord.empty() || o.slurm_conf.empty() || o.cluster.empty() || o.jobs_file.empty() ||
      o.nodes < 2)
    die("usage: accounting_bench --aggregatord PATH --slurm-conf FILE --cluster NAME --jobs-file "
        "FILE [...]");
  return Bench(std::move(o)).run();
}
