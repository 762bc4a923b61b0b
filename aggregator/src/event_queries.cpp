#include "accel/aggregator/event_queries.h"

#include <sys/eventfd.h>
#include <unistd.h>
#include <zmq.h>

#include <atomic>
#include <condition_variable>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>
#include <zmq.hpp>

#include "accel/aggregator/event_json.h"
#include "accel/aggregator/job_report.h"
#include "accel/aggregator/store.h"
#include "accel/common/log.h"
#include "accel/schemas/query_generated.h"
#include "fair_queue.h"

namespace accel::aggregator {
namespace {

namespace fb = accel::query;
using Clock = std::chrono::steady_clock;

struct Ask {
  uint64_t id = 0;
  uint32_t job_id = 0;
  uint32_t uid = 0;
  bool admin = false;
  int64_t after_row = 0;
  std::string node;
  bool json = false;
  bool wait = false;
  bool report = false;  // a ReportAsk: the job's report, not its events
};

// An ask on its way: waiting for a worker, or held for its job's next event.
struct Held {
  std::string peer;  // ROUTER identity
  std::string from;  // the asking node's name (its key's)
  Ask ask;
  Clock::time_point since;
};

// What a worker made of an ask: the answer's bytes, or none when the ask is
// to be held.
struct Done {
  Held work;
  std::optional<std::string> bytes;
};

// Whose turn an ask takes: the person the node vouches for, one queue per
// uid whichever node asks; an administrator's asks queue per node.
std::string userOf(const Held& h) {
  return h.ask.admin ? "admin@" + h.from : "uid " + std::to_string(h.ask.uid);
}

void signal(int fd) {
  uint64_t one = 1;
  (void)!write(fd, &one, sizeof one);
}

// An ask's bytes, verified; nullopt for anything else. Copied first:
// FlatBuffers reads offsets in place and wants them aligned, and a ZeroMQ
// message's data need not be (an ask is small).
std::optional<Ask> parseAsk(const zmq::message_t& m) {
  const auto* raw = static_cast<const uint8_t*>(m.data());
  const std::vector<uint8_t> bytes(raw, raw + m.size());
  const uint8_t* data = bytes.data();
  flatbuffers::Verifier::Options vo;
  vo.max_depth = 8;
  vo.max_tables = 64;
  flatbuffers::Verifier v(data, bytes.size(), vo);
  if (!fb::MessageBufferHasIdentifier(data) || !fb::VerifyMessageBuffer(v)) return std::nullopt;
  if (const auto* r = fb::GetMessage(data)->body_as_ReportAsk()) {
    Ask ask;
    ask.id = r->id();
    ask.job_id = r->job_id();
    ask.uid = r->uid();
    ask.admin = r->admin();
    ask.report = true;
    return ask;
  }
  const auto* a = fb::GetMessage(data)->body_as_EventsAsk();
  if (!a) return std::nullopt;
  return Ask{a->id(),
             a->job_id(),
             a->uid(),
             a->admin(),
             std::max<int64_t>(0, a->after_row()),
             a->node() ? a->node()->str() : std::string(),
             a->json(),
             a->wait()};
}

std::string encodeAnswer(uint64_t id, fb::Outcome outcome, const std::string& message,
                         const std::vector<std::string>& lines, int64_t last_row, bool more) {
  flatbuffers::FlatBufferBuilder fbb(1024 + 16 * lines.size());
  auto text = fbb.CreateVectorOfStrings(lines);
  auto answer =
      fb::CreateEventsAnswer(fbb, id, outcome, fbb.CreateString(message), text, last_row, more);
  fbb.Finish(fb::CreateMessage(fbb, fb::Body::EventsAnswer, answer.Union()),
             fb::MessageIdentifier());
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

std::string encodeReport(uint64_t id, fb::Outcome outcome, const std::string& message,
                         const std::string& report) {
  flatbuffers::FlatBufferBuilder fbb(256 + report.size());
  auto answer = fb::CreateReportAnswerDirect(fbb, id, outcome, message.c_str(), report.c_str());
  fbb.Finish(fb::CreateMessage(fbb, fb::Body::ReportAnswer, answer.Union()),
             fb::MessageIdentifier());
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

}  // namespace

struct EventQueries::Impl {
  QueryOptions options;
  std::unique_ptr<Store> store;                // the receiving thread's: new rows
  std::vector<std::unique_ptr<Store>> stores;  // one per worker
  zmq::socket_t router;
  int event_fd = -1;  // committed()
  int done_fd = -1;   // a worker left something in `finished`
  std::atomic<bool> stop{false};
  std::thread thread;
  std::vector<std::thread> workers;
  // The receiving thread's alone.
  std::list<Held> held;
  std::map<std::string, size_t> held_by_node;
  int64_t seen_row = 0;  // new rows after this are looked at on the next commit
  // Shared with the workers, under mu.
  std::mutex mu;
  std::condition_variable wake;
  FairQueue<Held> queue;
  std::vector<Done> finished;
  bool paused = false;
  std::mutex owners_mu;
  std::unordered_map<uint32_t, uint32_t> owners;  // job -> uid, once recorded

  Impl(zmq::context_t& ctx, const QueryOptions& o)
      : options(o),
        router(ctx, zmq::socket_type::router),
        queue(o.max_queued_per_user, o.max_queued) {}

  ~Impl() {
    if (event_fd >= 0) close(event_fd);
    if (done_fd >= 0) close(done_fd);
  }

  void run() {
    while (!stop) {
      auto wait = std::chrono::milliseconds(1000);
      if (!held.empty())
        wait = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(
                              held.front().since + options.hold_timeout - Clock::now()),
                          std::chrono::milliseconds(0), wait);
      zmq::pollitem_t items[3] = {{router.handle(), 0, ZMQ_POLLIN, 0},
                                  {nullptr, event_fd, ZMQ_POLLIN, 0},
                                  {nullptr, done_fd, ZMQ_POLLIN, 0}};
      zmq::poll(items, 3, wait);
      if (items[1].revents & ZMQ_POLLIN) {
        uint64_t n;
        (void)!read(event_fd, &n, sizeof n);
        if (stop) return;
        serveNewRows();
      }
      if (items[2].revents & ZMQ_POLLIN) deliver();
      if (items[0].revents & ZMQ_POLLIN) receive();
      expireHolds();
    }
  }

  void receive() {
    for (int n = 0; n < 256; ++n) {
      zmq::message_t identity, payload;
      if (!router.recv(identity, zmq::recv_flags::dontwait)) return;
      if (!identity.more()) continue;
      (void)router.recv(payload, zmq::recv_flags::none);
      bool extra = payload.more();
      while (extra) {
        zmq::message_t part;
        (void)router.recv(part, zmq::recv_flags::none);
        extra = part.more();
      }
      const char* user = zmq_msg_gets(payload.handle(), "User-Id");
      const char* key = zmq_msg_gets(payload.handle(), "Curve-Key");
      if (options.still_allowed && !(user && key && options.still_allowed(key, user))) continue;
      auto ask = parseAsk(payload);
      if (!ask || payload.more()) {
        send(identity.to_string(),
             encodeAnswer(0, fb::Outcome::BadRequest, "not an events question", {}, 0, false));
        continue;
      }
      admit(Held{identity.to_string(), user ? user : "", *ask, Clock::now()}, false);
    }
  }

  // Into the user's queue; a user with max_queued_per_user asks in progress
  // (or a full queue) is told to wait, and nobody else is held up by it.
  void admit(Held h, bool again) {
    // What a refusal needs, kept before the ask moves into the queue.
    const auto peer = h.peer;
    const auto id = h.ask.id;
    const auto after_row = h.ask.after_row;
    {
      std::lock_guard lock(mu);
      const std::string user = userOf(h);
      if (queue.push(user, std::move(h), again)) {
        wake.notify_one();
        return;
      }
    }
    send(peer, encodeAnswer(id, fb::Outcome::Busy,
                            "too many questions of yours are in progress; try again later", {},
                            after_row, false));
  }

  void deliver() {
    uint64_t n;
    (void)!read(done_fd, &n, sizeof n);
    std::vector<Done> done;
    {
      std::lock_guard lock(mu);
      done.swap(finished);
    }
    for (auto& d : done) {
      if (d.bytes)
        send(d.work.peer, *d.bytes);
      else
        hold(std::move(d.work));
    }
  }

  void work(Store& db) {
    std::unique_lock lock(mu);
    while (true) {
      wake.wait(lock, [&] { return stop || (!paused && queue.waiting() > 0); });
      if (stop) return;
      auto next = queue.pop();
      lock.unlock();
      auto bytes = answer(db, next->second);
      Done d{std::move(next->second), std::move(bytes)};
      lock.lock();
      queue.finish(next->first);
      finished.push_back(std::move(d));
      signal(done_fd);
    }
  }

  void send(const std::string& peer, const std::string& bytes) {
    // A node that went away has no pipe: ROUTER drops the answer, fine.
    if (router.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait))
      (void)router.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }

  // The owner of the job (cached once known); nullopt while no
  // prolog_started of it is recorded.
  std::optional<uint32_t> ownerOf(Store& db, uint32_t job_id) {
    {
      std::lock_guard lock(owners_mu);
      if (auto it = owners.find(job_id); it != owners.end()) return it->second;
    }
    auto owner = db.jobOwner(job_id);
    if (!owner.ok()) {
      log::warning("events query: " + owner.error().message());
      return std::nullopt;
    }
    if (!*owner) return std::nullopt;
    std::lock_guard lock(owners_mu);
    if (owners.size() >= 100000) owners.clear();
    owners.emplace(job_id, **owner);
    return *owner;
  }

  // The answer's bytes; nullopt: hold the ask. One page of at most
  // max_answer_events rows, having examined at most max_scanned_rows.
  std::optional<std::string> answer(Store& db, const Held& h) {
    const Ask& ask = h.ask;
    if (ask.report) return answerReport(db, ask);
    const std::string not_found =
        "no events of job " + std::to_string(ask.job_id) + " of yours are recorded";
    // A reused id: the latest job's owner and events only; no cache, as the
    // id may be given to a new job at any time.
    auto latest = db.jobInstance(ask.job_id);
    if (!latest.ok()) {
      log::warning("events query: " + latest.error().message());
      return encodeAnswer(ask.id, fb::Outcome::Busy, "the aggregator cannot read its database now",
                          {}, ask.after_row, false);
    }
    if (!ask.admin) {
      auto owner = *latest ? std::optional<uint32_t>((*latest)->uid) : ownerOf(db, ask.job_id);
      if (!owner && ask.wait) return std::nullopt;
      if (!owner || *owner != ask.uid)
        return encodeAnswer(ask.id, fb::Outcome::NotFound, not_found, {}, ask.after_row, false);
    }
    EventFilter filter{ask.job_id,
                       std::nullopt,
                       ask.after_row,
                       options.max_answer_events,
                       options.max_scanned_rows,
                       Clock::now() + options.max_answer_time};
    if (!ask.node.empty()) filter.node = ask.node;
    if (*latest) filter.since_ns = (*latest)->since_ns;
    if (!ask.admin) {
      auto held_since = db.heldSince(ask.job_id);
      if (!held_since.ok()) {
        log::warning("events query: " + held_since.error().message());
        return encodeAnswer(ask.id, fb::Outcome::Busy,
                            "the aggregator cannot read its database now", {}, ask.after_row,
                            false);
      }
      if (*held_since) filter.before_ns = **held_since;
    }
    auto page = db.readEventPage(filter);
    if (!page.ok()) {
      log::warning("events query: " + page.error().message());
      return encodeAnswer(ask.id, fb::Outcome::Busy, "the aggregator cannot read its database now",
                          {}, ask.after_row, false);
    }
    if (page->rows.empty() && !page->more && ask.wait) return std::nullopt;
    std::vector<std::string> lines;
    size_t bytes = 0;
    bool more = page->more;
    for (const auto& e : page->rows) {
      std::string line =
          ask.json ? eventJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                   : eventLine(e);
      const size_t cap = options.max_answer_bytes / 2;
      if (line.size() > cap) line = line.substr(0, cap) + " ...(cut)";
      if (!lines.empty() && bytes + line.size() > options.max_answer_bytes) {
        more = true;
        break;
      }
      bytes += line.size();
      lines.push_back(std::move(line));
    }
    // Where the next ask goes on: past every row examined, or past the last
    // line sent when the answer's size cut it short.
    const int64_t last =
        lines.size() == page->rows.size() ? page->next_row : page->rows[lines.size() - 1].row;
    return encodeAnswer(ask.id, fb::Outcome::Ok, "", lines, last, more);
  }

  // A job's report from its stored summary. Another person's job gets the
  // very answer of a job the aggregator does not know: same outcome, same
  // words.
  std::string answerReport(Store& db, const Ask& ask) {
    const std::string not_found = "no report of job " + std::to_string(ask.job_id) +
                                  " of yours: the aggregator has no record of it";
    const auto busy = [&](const Error& e) {
      log::warning("report query: " + e.message());
      return encodeReport(ask.id, fb::Outcome::Busy, "the aggregator cannot read its database now",
                          "");
    };
    auto latest = db.jobInstance(ask.job_id);
    if (!latest.ok()) return busy(latest.error());
    if (!ask.admin) {
      auto owner = *latest ? std::optional<uint32_t>((*latest)->uid) : ownerOf(db, ask.job_id);
      if (!owner || *owner != ask.uid)
        return encodeReport(ask.id, fb::Outcome::NotFound, not_found, "");
    }
    auto job = db.loadJob(ask.job_id);
    if (!job.ok()) return busy(job.error());
    if (!*job) return encodeReport(ask.id, fb::Outcome::NotFound, not_found, "");
    return encodeReport(ask.id, fb::Outcome::Ok, "", reportText(**job));
  }

  void hold(Held h) {
    size_t& mine = held_by_node[h.from];
    if (held.size() >= options.max_held || mine >= options.max_held_per_node) {
      if (mine == 0) held_by_node.erase(h.from);
      return send(h.peer, encodeAnswer(h.ask.id, fb::Outcome::Busy,
                                       "the aggregator holds too many questions; try again later",
                                       {}, h.ask.after_row, false));
    }
    ++mine;
    // Kept in order of `since`, oldest first (a re-held ask keeps its place).
    auto at = held.end();
    while (at != held.begin() && std::prev(at)->since > h.since) --at;
    held.insert(at, std::move(h));
  }

  void unhold(std::list<Held>::iterator it) {
    if (--held_by_node[it->from] == 0) held_by_node.erase(it->from);
    held.erase(it);
  }

  // After a commit: the asks held for jobs that have new rows go back to
  // the workers (and are held again when the new rows are not theirs to see yet).
  void serveNewRows() {
    if (held.empty()) {
      if (auto last = store->lastRow(); last.ok()) seen_row = *last;
      return;
    }
    auto fresh = store->jobsAfter(seen_row);
    if (!fresh.ok()) {
      log::warning("events query: " + fresh.error().message());
      return;
    }
    seen_row = fresh->last_row;
    if (fresh->jobs.empty()) return;
    for (auto it = held.begin(); it != held.end();) {
      auto next = std::next(it);
      if (std::find(fresh->jobs.begin(), fresh->jobs.end(), it->ask.job_id) != fresh->jobs.end()) {
        admit(std::move(*it), true);
        unhold(it);
      }
      it = next;
    }
  }

  void expireHolds() {
    const auto now = Clock::now();
    while (!held.empty() && held.front().since + options.hold_timeout <= now) {
      const Held& h = held.front();
      send(h.peer, encodeAnswer(h.ask.id, fb::Outcome::Ok, "", {}, h.ask.after_row, false));
      unhold(held.begin());
    }
  }
};

EventQueries::EventQueries(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

EventQueries::~EventQueries() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->wake.notify_all();
  committed();
  for (auto& w : impl_->workers)
    if (w.joinable()) w.join();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void EventQueries::committed() { signal(impl_->event_fd); }

void EventQueries::pause(bool paused) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->paused = paused;
  }
  impl_->wake.notify_all();
}

size_t EventQueries::waiting() {
  std::lock_guard lock(impl_->mu);
  return impl_->queue.waiting();
}

Result<std::unique_ptr<EventQueries>> EventQueries::start(zmq::context_t& ctx,
                                                          const QueryOptions& o,
                                                          const event::CurveKeyPair& keys) {
  auto impl = std::make_unique<Impl>(ctx, o);
  for (size_t i = 0; i <= std::max<size_t>(o.workers, 1); ++i) {
    auto store = Store::open(o.database, Store::Mode::kReadOnly);
    if (!store.ok()) return store.error().context("database " + o.database);
    (i == 0 ? impl->store : impl->stores.emplace_back()) = std::move(*store);
  }
  auto last = impl->store->lastRow();
  if (!last.ok()) return last.error().context("database " + o.database);
  impl->seen_row = *last;
  impl->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  impl->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl->event_fd < 0 || impl->done_fd < 0)
    return Error(ErrorCode::kInternal, "eventfd for events queries");
  try {
    auto& r = impl->router;
    r.set(zmq::sockopt::linger, 0);
    r.set(zmq::sockopt::curve_server, 1);
    r.set(zmq::sockopt::curve_secretkey, keys.secret_key);
    r.set(zmq::sockopt::zap_domain, "accel");
    r.set(zmq::sockopt::maxmsgsize, int64_t{4096});  // an ask is small
    r.bind(o.listen);
  } catch (const zmq::error_t& e) {
    return Error(ErrorCode::kUnavailable, "listen on " + o.listen + ": " + e.what());
  }
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] {
    try {
      raw->run();
    } catch (const zmq::error_t& e) {
      if (!raw->stop) log::error(std::string("events query: stopped: ") + e.what());
    }
  });
  for (auto& db : impl->stores) {
    Store* s = db.get();
    impl->workers.emplace_back([raw, s] { raw->work(*s); });
  }
  return std::unique_ptr<EventQueries>(new EventQueries(std::move(impl)));
}

}  // namespace accel::aggregator
