// accel-aggregatord's main loop: receive/commit/ack on the main thread,
// AdminComment writes on a second thread with its own database connection,
// metrics on a third. Signals are blocked everywhere and polled here, so no
// blocking call is ever interrupted.
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>

#include "accel/aggregator/accept_failure_log.h"
#include "accel/aggregator/allow_list.h"
#include "accel/aggregator/cli.h"
#include "accel/aggregator/comment_writer.h"
#include "accel/aggregator/run_checks.h"
#include "accel/aggregator/server.h"
#include "accel/common/clock.h"
#include "accel/common/log.h"
#include "accel/common/metrics_http.h"
#include "accel/common/notify.h"

namespace accel::aggregator {
namespace {

Store::Sync storeSync(const AggregatorConfig& c) {
  return c.synchronous == AggregatorConfig::Synchronous::kFull ? Store::Sync::kFull
                                                               : Store::Sync::kNormal;
}

int fail(const std::string& what, const Error& e) {
  log::error("startup: " + what + ": " + e.message());
  return 1;
}

std::string statusLine(const Metrics& m) {
  uint64_t rejected = 0;
  for (const auto& r : m.rejected) rejected += r;
  return "events " + std::to_string(m.events_in.load()) + ", duplicates " +
         std::to_string(m.duplicates.load()) + ", rejected " + std::to_string(rejected) +
         ", comments pending " + std::to_string(m.comments_pending.load());
}

// Runs the comment writer until `stop`; logs each failing job once per
// change of its error text so an outage does not flood the journal.
void commentLoop(const AggregatorConfig& c, const AccountingFactory& make_accounting,
                 Metrics& metrics, const std::atomic<bool>& stop) {
  auto store = Store::open(c.database, Store::Mode::kReadWrite, storeSync(c));
  if (!store.ok()) {
    log::error("comments: database: " + store.error().message());
    return;
  }
  std::unique_ptr<Accounting> accounting = make_accounting(c);
  CommentWriter writer(**store, *accounting, metrics,
                       {.writes_per_second = double(c.comment_writes_per_second),
                        .batch_size = int(c.comment_batch_size)},
                       systemClock());
  uint64_t failures_seen = 0;
  while (!stop) {
    auto r = writer.runOnce();
    if (!r.ok()) log::warning("comments: " + r.error().message());
    if (metrics.comment_failures > failures_seen) {
      failures_seen = metrics.comment_failures;
      log::warning("comments: AdminComment write failed (" + std::to_string(failures_seen) +
                   " failures so far); will retry, see pending_comments.last_error");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// SIGHUP: the allow list is read again; a list that cannot be used leaves
// the one in force.
void reloadAllowList(Server& server, const std::string& dir) {
  auto n = server.reloadAllowList();
  if (n.ok())
    log::info("allow list: reloaded " + dir + ", " + std::to_string(*n) + " nodes");
  else
    log::error("allow list: not reloaded, the previous list stays in force: " +
               n.error().message());
}

// Logs refused frames: one line each, at most kRefusalLines per 10 s, then
// how many more there were. A peer sending garbage cannot flood the journal.
class RefusalLog {
 public:
  void add(Server& server, std::chrono::steady_clock::time_point now) {
    uint64_t more = 0;
    auto refused = server.takeRejections(&more);
    suppressed_ += more;
    if (now - window_ >= std::chrono::seconds(10)) {
      if (suppressed_ > 0)
        log::warning("ingest: " + std::to_string(suppressed_) +
                     " more frames refused or held events not counted");
      window_ = now, lines_ = 0, suppressed_ = 0;
    }
    for (const auto& r : refused) say(describe(r));
  }
  // Held events of new runs that slurmctld did not confirm, on the same
  // budget of lines.
  void addUnconfirmed(Ingestor& ingestor) {
    uint64_t more = 0;
    for (const auto& u : ingestor.takeUnconfirmed(&more))
      say("ingest: an event from " + u.node + " is not counted: " + u.why);
    suppressed_ += more;
  }

 private:
  void say(const std::string& line) {
    if (lines_ >= kRefusalLines) {
      ++suppressed_;
      return;
    }
    ++lines_;
    log::warning(line);
  }
  static std::string describe(const Rejection& r) {
    std::string what = "ingest: refused a frame from " +
                       (r.peer.empty() ? std::string("an unnamed peer") : r.peer);
    if (r.nack.seq != 0)
      what +=
          " (epoch " + std::to_string(r.nack.epoch) + ", seq " + std::to_string(r.nack.seq) + ")";
    what += std::string(": ") + event::nackReasonName(r.nack.reason);
    if (!r.nack.message.empty()) what += ": " + r.nack.message;
    return what + (r.nack.skipped ? "; not stored, the stream goes on" : "");
  }
  static constexpr int kRefusalLines = 20;
  std::chrono::steady_clock::time_point window_{};
  int lines_ = 0;
  uint64_t suppressed_ = 0;
};

}  // namespace

// Every node holds a connection, and with it a descriptor: the soft limit
// (1024 under systemd by default) is raised to the hard one, as thousands of
// nodes need. Returns the limit in force.
uint64_t raiseDescriptorLimit() {
  rlimit fd{};
  if (::getrlimit(RLIMIT_NOFILE, &fd) != 0) return 0;
  if (fd.rlim_cur < fd.rlim_max) {
    rlimit raised = fd;
    raised.rlim_cur = fd.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) fd = raised;
  }
  return static_cast<uint64_t>(fd.rlim_cur);
}

int runDaemon(const AggregatorConfig& c, const AccountingFactory& make_accounting,
              const JobRunsFactory& make_job_runs) {
  sigset_t sigs;
  sigemptyset(&sigs);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&sigs, s);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);  // before any thread starts

  auto keys = loadServerKey(c.secret_key_file, ::geteuid());
  if (!keys.ok()) return fail("secret key", keys.error());
  auto store = Store::open(c.database, Store::Mode::kReadWrite, storeSync(c));
  if (!store.ok()) return fail("database " + c.database, store.error());
  Metrics metrics;
  RunChecker run_checks([&c, &make_job_runs] { return make_job_runs(c); }, systemClock(), metrics);
  Ingestor ingestor(**store, metrics, c.max_frame_bytes, c.summary_wait, &run_checks);
  if (Status s = ingestor.load(); !s.ok()) return fail("database " + c.database, s.error());
  std::unique_ptr<metrics::HttpEndpoint> metrics_server;
  if (c.metrics_address) {
    auto m = metrics::HttpEndpoint::start(
        *c.metrics_address, [&metrics](metrics::Format f) { return metrics.render(f); });
    if (!m.ok()) return fail("MetricsAddress", m.error());
    metrics_server = std::move(*m);
  }
  ServerOptions options{c.listen,         *keys,
                        c.allow_list_dir, c.max_frame_bytes,
                        c.batch_size,     std::chrono::milliseconds(c.batch_wait_ms),
                        c.ping_interval,  c.ping_timeout,
                        c.tcp_keepalive,  c.query_address.value_or(""),
                        c.database};
  options.handshake_timeout = c.handshake_timeout;
  options.io_threads = int(c.io_threads);
  options.per_address = c.connections_per_address;
  auto server = Server::start(options, ingestor, metrics);
  if (!server.ok()) return fail("listen", server.error());

  std::atomic<bool> stop{false};
  std::thread comments;
  if (c.write_comments)
    comments = std::thread([&] { commentLoop(c, make_accounting, metrics, stop); });

  const uint64_t fd_limit = raiseDescriptorLimit();
  log::info("started: listening on " + c.listen +
            (c.query_address ? ", questions on " + *c.query_address : std::string()) +
            ", database " + c.database + ", up to " + std::to_string(fd_limit) +
            " descriptors (about as many nodes)");
  notify::ready(statusLine(metrics));
  auto ping = notify::watchdogInterval();
  auto last_status = std::chrono::steady_clock::now(), last_ping = last_status,
       last_error = last_status - std::chrono::hours(1);
  timespec zero{};
  RefusalLog refusals;
  AcceptFailureLog accept_failures(fd_limit, systemClock());
  while (true) {
    int sig = sigtimedwait(&sigs, nullptr, &zero);
    if (sig == SIGTERM || sig == SIGINT) break;
    if (sig == SIGHUP) reloadAllowList(**server, c.allow_list_dir);
    Status s = (*server)->poll(std::chrono::milliseconds(100));
    auto now = std::chrono::steady_clock::now();
    refusals.add(**server, now);
    refusals.addUnconfirmed(ingestor);
    accept_failures.check(metrics);
    if (!s.ok() && now - last_error > std::chrono::seconds(10)) {
      log::error("ingest: batch not stored (agents will resend): " + s.error().message());
      last_error = now;
    }
    if (ping.count() && now - last_ping >= ping) notify::watchdog(), last_ping = now;
    if (now - last_status >= std::chrono::seconds(1))
      notify::status(statusLine(metrics)), last_status = now;
  }
  notify::stopping();
  log::info("stopping: " + statusLine(metrics));
  stop = true;
  if (comments.joinable()) comments.join();
  return 0;
}

}  // namespace accel::aggregator
