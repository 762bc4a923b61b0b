// accel-aggregatord's main loop: receive/commit/ack on the main thread,
// AdminComment writes on a second thread with its own database connection,
// metrics on a third. Signals are blocked everywhere and polled here, so no
// blocking call is ever interrupted.
#include <signal.h>
#include <time.h>

#include <atomic>
#include <thread>

#include "accel/aggregator/cli.h"
#include "accel/aggregator/comment_writer.h"
#include "accel/aggregator/metrics_server.h"
#include "accel/aggregator/notify.h"
#include "accel/aggregator/server.h"
#include "accel/aggregator/slurmdb_accounting.h"
#include "accel/common/log.h"

namespace accel::aggregator {
namespace {

int64_t realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

Store::Sync storeSync(const AggregatorConfig& c) {
  return c.synchronous == AggregatorConfig::Synchronous::kFull ? Store::Sync::kFull : Store::Sync::kNormal;
}

int fail(const std::string& what, const Error& e) {
  log::error("startup: " + what + ": " + e.message());
  return 1;
}

std::string statusLine(const Metrics& m) {
  uint64_t rejected = 0;
  for (const auto& r : m.rejected) rejected += r;
  return "events " + std::to_string(m.events_in.load()) + ", duplicates " + std::to_string(m.duplicates.load()) +
         ", rejected " + std::to_string(rejected) + ", comments pending " + std::to_string(m.comments_pending.load());
}

// Runs the comment writer until `stop`; logs each failing job once per
// change of its error text so an outage does not flood the journal.
void commentLoop(const AggregatorConfig& c, Metrics& metrics, const std::atomic<bool>& stop) {
  auto store = Store::open(c.database, Store::Mode::kReadWrite, storeSync(c));
  if (!store.ok()) {
    log::error("comments: database: " + store.error().message());
    return;
  }
  SlurmdbAccounting accounting(c.cluster_name, c.slurm_conf.value_or(""));
  CommentWriter writer(**store, accounting, metrics, {.writes_per_second = double(c.comment_writes_per_second)},
                       realtimeNs);
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

}  // namespace

int runDaemon(const AggregatorConfig& c) {
  sigset_t sigs;
  sigemptyset(&sigs);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&sigs, s);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);  // before any thread starts

  auto keys = event::loadSecretKey(c.secret_key_file);
  if (!keys.ok()) return fail("secret key", keys.error());
  auto store = Store::open(c.database, Store::Mode::kReadWrite, storeSync(c));
  if (!store.ok()) return fail("database " + c.database, store.error());
  Metrics metrics;
  Ingestor ingestor(**store, metrics, c.max_frame_bytes, c.summary_wait);
  if (Status s = ingestor.load(); !s.ok()) return fail("database " + c.database, s.error());
  std::unique_ptr<MetricsServer> metrics_server;
  if (c.metrics_address) {
    auto m = MetricsServer::start(*c.metrics_address, metrics);
    if (!m.ok()) return fail("metrics", m.error());
    metrics_server = std::move(*m);
  }
  ServerOptions options{c.listen, *keys, c.allow_list_dir, c.max_frame_bytes, c.batch_size,
                        std::chrono::milliseconds(c.batch_wait_ms)};
  auto server = Server::start(options, ingestor, metrics);
  if (!server.ok()) return fail("listen", server.error());

  std::atomic<bool> stop{false};
  std::thread comments;
  if (c.write_comments) comments = std::thread([&] { commentLoop(c, metrics, stop); });

  log::info("started: listening on " + c.listen + ", database " + c.database);
  notify::ready(statusLine(metrics));
  auto ping = notify::watchdogInterval();
  auto last_status = std::chrono::steady_clock::now(), last_ping = last_status, last_error = last_status - std::chrono::hours(1);
  timespec zero{};
  while (true) {
    int sig = sigtimedwait(&sigs, nullptr, &zero);
    if (sig == SIGTERM || sig == SIGINT) break;
    Status s = (*server)->poll(std::chrono::milliseconds(100));
    auto now = std::chrono::steady_clock::now();
    if (!s.ok() && now - last_error > std::chrono::seconds(10)) {
      log::error("ingest: batch not stored (agents will resend): " + s.error().message());
      last_error = now;
    }
    if (ping.count() && now - last_ping >= ping) notify::watchdog(), last_ping = now;
    if (now - last_status >= std::chrono::seconds(1)) notify::status(statusLine(metrics)), last_status = now;
  }
  notify::stopping();
  log::info("stopping: " + statusLine(metrics));
  stop = true;
  if (comments.joinable()) comments.join();
  return 0;
}

}  // namespace accel::aggregator
