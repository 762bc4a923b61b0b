#include "accel/aggregator/event_queries.h"

#include <sys/eventfd.h>
#include <unistd.h>
#include <zmq.h>

#include <atomic>
#include <list>
#include <map>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>
#include <zmq.hpp>

#include "accel/aggregator/event_json.h"
#include "accel/aggregator/store.h"
#include "accel/common/log.h"
#include "accel/schemas/query_generated.h"

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
};

struct Held {
  std::string peer;  // ROUTER identity
  std::string from;  // the asking node's name (its key's)
  Ask ask;
  Clock::time_point since;
};

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

}  // namespace

struct EventQueries::Impl {
  QueryOptions options;
  std::unique_ptr<Store> store;
  zmq::socket_t router;
  int event_fd = -1;
  std::atomic<bool> stop{false};
  std::thread thread;
  std::list<Held> held;
  std::map<std::string, size_t> held_by_node;
  std::unordered_map<uint32_t, uint32_t> owners;  // job -> uid, once recorded
  int64_t seen_row = 0;  // new rows after this are looked at on the next commit

  Impl(zmq::context_t& ctx, const QueryOptions& o)
      : options(o), router(ctx, zmq::socket_type::router) {}

  ~Impl() {
    if (event_fd >= 0) close(event_fd);
  }

  void run() {
    while (!stop) {
      auto wait = std::chrono::milliseconds(1000);
      if (!held.empty())
        wait = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(
                              held.front().since + options.hold_timeout - Clock::now()),
                          std::chrono::milliseconds(0), wait);
      zmq::pollitem_t items[2] = {{router.handle(), 0, ZMQ_POLLIN, 0},
                                  {nullptr, event_fd, ZMQ_POLLIN, 0}};
      zmq::poll(items, 2, wait);
      if (items[1].revents & ZMQ_POLLIN) {
        uint64_t n;
        (void)!read(event_fd, &n, sizeof n);
        if (stop) return;
        serveNewRows();
      }
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
      std::string from = user ? user : "";
      auto ask = parseAsk(payload);
      if (!ask || payload.more()) {
        send(identity.to_string(),
             encodeAnswer(0, fb::Outcome::BadRequest, "not an events question", {}, 0, false));
        continue;
      }
      answer(identity.to_string(), from, *ask, Clock::now());
    }
  }

  void send(const std::string& peer, const std::string& bytes) {
    // A node that went away has no pipe: ROUTER drops the answer, fine.
    if (router.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait))
      (void)router.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }

  // The owner of the job (cached once known); nullopt while no
  // prolog_started of it is recorded.
  std::optional<uint32_t> ownerOf(uint32_t job_id) {
    if (auto it = owners.find(job_id); it != owners.end()) return it->second;
    auto owner = store->jobOwner(job_id);
    if (!owner.ok()) {
      log::warning("events query: " + owner.error().message());
      return std::nullopt;
    }
    if (!*owner) return std::nullopt;
    if (owners.size() >= 100000) owners.clear();
    owners.emplace(job_id, **owner);
    return *owner;
  }

  void answer(const std::string& peer, const std::string& from, const Ask& ask,
              Clock::time_point since) {
    const std::string not_found =
        "no events of job " + std::to_string(ask.job_id) + " of yours are recorded";
    if (!ask.admin) {
      auto owner = ownerOf(ask.job_id);
      if (owner && *owner != ask.uid)
        return send(
            peer, encodeAnswer(ask.id, fb::Outcome::NotFound, not_found, {}, ask.after_row, false));
      if (!owner) {
        if (ask.wait) return hold(peer, from, ask, since);
        return send(
            peer, encodeAnswer(ask.id, fb::Outcome::NotFound, not_found, {}, ask.after_row, false));
      }
    }
    EventFilter filter{ask.job_id, std::nullopt, ask.after_row, options.max_answer_events};
    if (!ask.node.empty()) filter.node = ask.node;
    auto rows = store->readEvents(filter);
    if (!rows.ok()) {
      log::warning("events query: " + rows.error().message());
      return send(peer, encodeAnswer(ask.id, fb::Outcome::Busy,
                                     "the aggregator cannot read its database now", {},
                                     ask.after_row, false));
    }
    if (rows->empty() && ask.wait) return hold(peer, from, ask, since);
    std::vector<std::string> lines;
    size_t bytes = 0;
    int64_t last = ask.after_row;
    bool more = rows->size() == size_t(options.max_answer_events);
    for (const auto& e : *rows) {
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
      last = e.row;
    }
    send(peer, encodeAnswer(ask.id, fb::Outcome::Ok, "", lines, last, more));
  }

  void hold(const std::string& peer, const std::string& from, const Ask& ask,
            Clock::time_point since) {
    size_t& mine = held_by_node[from];
    if (held.size() >= options.max_held || mine >= options.max_held_per_node) {
      if (mine == 0) held_by_node.erase(from);
      return send(peer, encodeAnswer(ask.id, fb::Outcome::Busy,
                                     "the aggregator holds too many questions; try again later", {},
                                     ask.after_row, false));
    }
    ++mine;
    // Kept in order of `since`, oldest first (a re-held ask keeps its place).
    auto at = held.end();
    while (at != held.begin() && std::prev(at)->since > since) --at;
    held.insert(at, Held{peer, from, ask, since});
  }

  void unhold(std::list<Held>::iterator it) {
    if (--held_by_node[it->from] == 0) held_by_node.erase(it->from);
    held.erase(it);
  }

  // After a commit: the asks held for jobs that have new rows are answered
  // (or held again, when the new rows are not theirs to see yet).
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
    std::vector<Held> due;
    for (auto it = held.begin(); it != held.end();) {
      auto next = std::next(it);
      if (std::find(fresh->jobs.begin(), fresh->jobs.end(), it->ask.job_id) != fresh->jobs.end()) {
        due.push_back(std::move(*it));
        unhold(it);
      }
      it = next;
    }
    for (const auto& h : due) answer(h.peer, h.from, h.ask, h.since);
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
  impl_->stop = true;
  committed();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void EventQueries::committed() {
  uint64_t one = 1;
  (void)!write(impl_->event_fd, &one, sizeof one);
}

Result<std::unique_ptr<EventQueries>> EventQueries::start(zmq::context_t& ctx,
                                                          const QueryOptions& o,
                                                          const event::CurveKeyPair& keys) {
  auto impl = std::make_unique<Impl>(ctx, o);
  auto store = Store::open(o.database, Store::Mode::kReadOnly);
  if (!store.ok()) return store.error().context("database " + o.database);
  impl->store = std::move(*store);
  auto last = impl->store->lastRow();
  if (!last.ok()) return last.error().context("database " + o.database);
  impl->seen_row = *last;
  impl->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl->event_fd < 0) return Error(ErrorCode::kInternal, "eventfd for events queries");
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
  return std::unique_ptr<EventQueries>(new EventQueries(std::move(impl)));
}

}  // namespace accel::aggregator
