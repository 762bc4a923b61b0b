// `accelctl events --job` on the aggregator's side: the latency of one ask
// (one page of a job's events) through EventQueries over CURVE, on a store
// holding a job of ROWS events (default 1,000,000) between as many events of
// four other users' jobs, and a sparse job of 200 events spread over the
// whole store. Measured idle, then while four users (four uids, a socket
// each) loop asks over their own long jobs; beside them, in the same run,
// the query of the earlier releases (every row of the job's span) on the
// same database as the baseline.
//
//   query_bench [ROWS] [ASKS]
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "accel/aggregator/event_queries.h"
#include "accel/aggregator/store.h"
#include "accel/schemas/query_generated.h"
#include "temp_dir.h"

namespace {

using namespace accel;
using Clock = std::chrono::steady_clock;
namespace q = accel::query;

constexpr uint32_t kLong = 7, kSparse = 9;
constexpr uint32_t kLoopJobs[] = {11, 12, 13, 14};
constexpr int kSparseEvents = 200;

struct Fill {
  explicit Fill(aggregator::Store& s) : store(s) {}
  aggregator::Store& store;
  std::vector<uint8_t> task = event::encode({"n1", 1, 1, 1, 1}, event::TaskStarted{kLong, 0, 1, 1});
  aggregator::Batch batch;
  uint64_t seq = 0;

  void add(uint32_t job, const std::vector<uint8_t>& bytes, const char* kind) {
    ++seq;
    batch.events.push_back(
        {{"n1", 1, seq, int64_t(seq), 0}, kind, job, 1, batch.bytes.size(), bytes.size()});
    batch.bytes.insert(batch.bytes.end(), bytes.begin(), bytes.end());
    if (batch.events.size() == 8192) flush();
  }
  void flush() {
    batch.progress[{"n1", 1}] = seq;
    if (!store.commit(batch).ok()) std::abort();
    batch = {};
  }
};

void fill(aggregator::Store& store, int64_t rows) {
  Fill f(store);
  auto prolog = [&](uint32_t job, uint32_t uid) {
    f.add(job, event::encode({"n1", 1, 1, 1, 1}, event::PrologStarted{job, uid, "u", "n1", 1, 0}),
          "prolog_started");
  };
  prolog(kLong, 1000);
  prolog(kSparse, 3000);
  for (uint32_t i = 0; i < 4; ++i) prolog(kLoopJobs[i], 2001 + i);
  const int64_t every = 2 * rows / kSparseEvents;
  for (int64_t i = 0; i < 2 * rows; ++i) {
    if (i % every == every / 2) f.add(kSparse, f.task, "task_started");
    f.add(i % 2 ? kLoopJobs[(i / 2) % 4] : kLong, f.task, "task_started");
  }
  f.flush();
}

std::string askBytes(uint64_t id, uint32_t job, uint32_t uid, int64_t after) {
  flatbuffers::FlatBufferBuilder fbb;
  auto body = q::CreateEventsAskDirect(fbb, id, job, uid, false, after, nullptr, false, false);
  fbb.Finish(q::CreateMessage(fbb, q::Body::EventsAsk, body.Union()), q::MessageIdentifier());
  return {reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize()};
}

struct Asker {
  zmq::socket_t s;
  uint64_t id = 0;
  Asker(zmq::context_t& ctx, const std::string& ep, const std::string& server_key)
      : s(ctx, zmq::socket_type::dealer) {
    auto keys = *event::generateCurveKeyPair();
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::curve_serverkey, server_key);
    s.set(zmq::sockopt::curve_publickey, keys.public_key);
    s.set(zmq::sockopt::curve_secretkey, keys.secret_key);
    s.connect(ep);
  }
  // One ask and its answer: (last_row, more, lines).
  std::tuple<int64_t, bool, size_t> ask(uint32_t job, uint32_t uid, int64_t after) {
    s.send(zmq::buffer(askBytes(++id, job, uid, after)));
    while (true) {
      zmq::message_t m;
      if (!s.recv(m)) std::abort();
      std::vector<uint8_t> bytes(static_cast<const uint8_t*>(m.data()),
                                 static_cast<const uint8_t*>(m.data()) + m.size());
      const auto* a = q::GetMessage(bytes.data())->body_as_EventsAnswer();
      if (!a || a->id() != id) continue;
      if (a->outcome() != q::Outcome::Ok) {
        std::fprintf(stderr, "ask refused: %s\n", a->message() ? a->message()->c_str() : "");
        std::abort();
      }
      return {a->last_row(), a->more(), a->lines() ? a->lines()->size() : 0};
    }
  }
};

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

// Latency (ms) of `asks` asks: a random page of the long job, and every
// fifth the sparse job whole (page after page).
std::pair<std::vector<double>, std::vector<double>> measure(Asker& a, int asks, int64_t last) {
  std::mt19937_64 rng(42);
  std::vector<double> page, sparse;
  for (int i = 0; i < asks; ++i) {
    auto t0 = Clock::now();
    if (i % 5 == 4) {
      int64_t after = 0;
      for (bool more = true; more;)
        std::tie(after, more, std::ignore) = a.ask(kSparse, 3000, after);
      sparse.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    } else {
      (void)a.ask(kLong, 1000, int64_t(rng() % uint64_t(last)));
      page.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
  }
  return {page, sparse};
}

// The earlier releases' statement: every row of the job's span after `after`.
std::pair<std::vector<double>, std::vector<double>> measureOld(const std::string& db, int asks,
                                                               int64_t last) {
  sqlite3* c = nullptr;
  sqlite3_open_v2(db.c_str(), &c, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(
      c,
      "SELECT rowid,node,epoch,seq,time_ns,kind,job_id,received_ns,envelope FROM events "
      "WHERE rowid >= (SELECT first_row FROM job_spans WHERE job_id = ?2) "
      "AND rowid <= (SELECT last_row FROM job_spans WHERE job_id = ?2) AND rowid > ?1 "
      "AND job_id = ?2 ORDER BY rowid LIMIT 256",
      -1, &s, nullptr);
  std::mt19937_64 rng(42);
  std::vector<double> page, sparse;
  for (int i = 0; i < asks; ++i) {
    auto t0 = Clock::now();
    const bool sp = i % 5 == 4;
    int64_t after = sp ? 0 : int64_t(rng() % uint64_t(last));
    for (bool more = true; more;) {
      sqlite3_bind_int64(s, 1, after);
      sqlite3_bind_int64(s, 2, sp ? kSparse : kLong);
      int n = 0;
      while (sqlite3_step(s) == SQLITE_ROW) ++n, after = sqlite3_column_int64(s, 0);
      sqlite3_reset(s);
      more = sp && n == 256;
      if (!sp) break;
    }
    (sp ? sparse : page)
        .push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  sqlite3_finalize(s);
  sqlite3_close(c);
  return {page, sparse};
}

void report(const char* name, const std::pair<std::vector<double>, std::vector<double>>& r) {
  std::printf("%s page_p50_ms=%.2f page_p99_ms=%.2f sparse_p50_ms=%.2f sparse_p99_ms=%.2f\n", name,
              pct(r.first, 0.5), pct(r.first, 0.99), pct(r.second, 0.5), pct(r.second, 0.99));
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const int asks = argc > 2 ? std::atoi(argv[2]) : 300;
  support::TempDir tmp("accel-query-bench");
  const std::string db = tmp.path() + "/events.db";
  {
    auto store = aggregator::Store::open(db, aggregator::Store::Mode::kReadWrite,
                                         aggregator::Store::Sync::kNormal);
    if (!store.ok()) return std::fprintf(stderr, "%s\n", store.error().message().c_str()), 1;
    auto t0 = Clock::now();
    fill(**store, rows);
    std::printf("filled rows=%lld in %.1f s\n", static_cast<long long>((*store)->lastRow().value()),
                std::chrono::duration<double>(Clock::now() - t0).count());
  }
  const int64_t last = 2 * rows;
  auto server_keys = *event::generateCurveKeyPair();
  zmq::context_t ctx;
  const std::string ep = "ipc://" + tmp.path() + "/query.sock";
  auto queries = aggregator::EventQueries::start(ctx, {.listen = ep, .database = db}, server_keys);
  if (!queries.ok()) return std::fprintf(stderr, "%s\n", queries.error().message().c_str()), 1;
  zmq::context_t clients;
  Asker me(clients, ep, server_keys.public_key);

  report("old_sql_idle", measureOld(db, asks, last));
  report("idle", measure(me, asks, last));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> loops{0};
  std::vector<std::thread> loopers;
  for (uint32_t i = 0; i < 4; ++i)
    loopers.emplace_back([&, i] {
      Asker a(clients, ep, server_keys.public_key);
      int64_t after = 0;
      while (!stop) {
        bool more;
        std::tie(after, more, std::ignore) = a.ask(kLoopJobs[i], 2001 + i, after);
        if (!more) after = 0;
        ++loops;
      }
    });
  auto t0 = Clock::now();
  report("four_loops", measure(me, asks, last));
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  stop = true;
  for (auto& t : loopers) t.join();
  std::printf("loopers asks_per_s=%.0f\n", double(loops) / secs);
  return 0;
}
