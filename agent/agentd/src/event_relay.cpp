#include "accel/agentd/event_relay.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "accel/agentd/control_handler.h"
#include "accel/common/log.h"
#include "accel/schemas/control_generated.h"
#include "accel/schemas/query_generated.h"

namespace accel::agentd {
namespace {

using Clock = std::chrono::steady_clock;
namespace q = accel::query;

struct RelayedCall {
  ipc::Socket conn;
  uid_t uid = 0;
  bool admin = false;
  EventsCall call;
  int64_t after_row = 0;
  uint64_t ask_id = 0;  // the ask in flight; 0: none
  bool held = false;    // ... and it asked to be held
  Clock::time_point asked_at;
  bool more = false;  // the last answer said more events are recorded already
  std::optional<std::vector<uint8_t>> unsent;  // a reply the caller has not taken yet
  bool last = false;                           // close once `unsent` is taken
};

std::vector<uint8_t> linesReply(
    const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* lines, bool done) {
  flatbuffers::FlatBufferBuilder fbb(1024);
  std::vector<flatbuffers::Offset<flatbuffers::String>> texts;
  if (lines)
    for (const auto* l : *lines) texts.push_back(fbb.CreateString(l->string_view()));
  auto body = control::CreateEventLines(fbb, fbb.CreateVector(texts), done);
  fbb.Finish(control::CreateReply(fbb, control::Outcome::Ok, 0, control::ReplyBody::EventLines,
                                  body.Union()));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<uint8_t> reportReply(const flatbuffers::String* json) {
  flatbuffers::FlatBufferBuilder fbb(1024 + (json ? json->size() : 0));
  auto body = control::CreateJobReportDirect(fbb, json ? json->c_str() : "");
  fbb.Finish(control::CreateReply(fbb, control::Outcome::Ok, 0, control::ReplyBody::JobReport,
                                  body.Union()));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

}  // namespace

struct EventRelay::Impl {
  RelayOptions options;
  zmq::context_t ctx{1};
  zmq::socket_t dealer{ctx, zmq::socket_type::dealer};
  int wake_fd = -1;
  std::atomic<bool> stop{false};
  std::thread thread;
  std::list<RelayedCall> callers;  // this thread's
  mutable std::mutex mu;           // guards incoming and the counts below
  std::vector<RelayedCall> incoming;
  size_t active = 0;
  std::map<uid_t, size_t> per_uid;
  uint64_t next_id = 0;

  explicit Impl(const RelayOptions& o) : options(o) {}
  ~Impl() {
    if (wake_fd >= 0) close(wake_fd);
  }

  void wake() {
    uint64_t one = 1;
    (void)!write(wake_fd, &one, sizeof one);
  }

  void run() {
    while (!stop) {
      takeIncoming();
      std::vector<zmq::pollitem_t> items{{dealer.handle(), 0, ZMQ_POLLIN, 0},
                                         {nullptr, wake_fd, ZMQ_POLLIN, 0}};
      for (const auto& c : callers)
        items.push_back(
            {nullptr, c.conn.fd(), short(ZMQ_POLLIN | (c.unsent ? ZMQ_POLLOUT : 0)), 0});
      // Idle (no caller) it waits for a caller only; else at most a second,
      // for the asks' time limits.
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(callers.empty() ? -1 : 1000));
      if (items[1].revents & ZMQ_POLLIN) {
        uint64_t n;
        (void)!read(wake_fd, &n, sizeof n);
      }
      if (stop) break;
      // The callers first: `items` follows their list as it was polled.
      size_t i = 2;
      for (auto it = callers.begin(); it != callers.end() && i < items.size(); ++i) {
        auto next = std::next(it);
        const short ev = items[i].revents;
        // A caller sends nothing after its request: anything readable is
        // its close (or a misuse, which ends the call too).
        if ((ev & (ZMQ_POLLIN | ZMQ_POLLERR)) && ipc::pending(it->conn) != ipc::Pending::kNothing) {
          drop(it);
        } else if ((ev & ZMQ_POLLOUT) && it->unsent) {
          deliver(it);
        }
        it = next;
      }
      if (items[0].revents & ZMQ_POLLIN) receiveAnswers();
      expireAsks();
    }
    for (auto it = callers.begin(); it != callers.end();) drop(it++);
  }

  void takeIncoming() {
    std::vector<RelayedCall> fresh;
    {
      std::lock_guard g(mu);
      fresh.swap(incoming);
    }
    for (auto& c : fresh) {
      callers.push_back(std::move(c));
      // A follower's asks are all held: the first too, so that one may
      // follow a job before its first event is recorded.
      auto it = std::prev(callers.end());
      ask(it, it->call.follow);
    }
  }

  void ask(std::list<RelayedCall>::iterator it, bool held) {
    flatbuffers::FlatBufferBuilder fbb(256);
    it->ask_id = ++next_id;
    it->held = held;
    it->asked_at = Clock::now();
    if (it->call.report) {
      auto r = q::CreateReportAsk(fbb, it->ask_id, it->call.job_id, it->uid, it->admin);
      fbb.Finish(q::CreateMessage(fbb, q::Body::ReportAsk, r.Union()), q::MessageIdentifier());
      (void)dealer.send(zmq::buffer(fbb.GetBufferPointer(), fbb.GetSize()),
                        zmq::send_flags::dontwait);
      return;
    }
    auto a = q::CreateEventsAskDirect(
        fbb, it->ask_id, it->call.job_id, it->uid, it->admin, it->after_row,
        it->call.node.empty() ? nullptr : it->call.node.c_str(), it->call.json, held);
    fbb.Finish(q::CreateMessage(fbb, q::Body::EventsAsk, a.Union()), q::MessageIdentifier());
    // Queued while the link is down (up to the high-water mark); an answer
    // that does not come in time is handled by expireAsks().
    (void)dealer.send(zmq::buffer(fbb.GetBufferPointer(), fbb.GetSize()),
                      zmq::send_flags::dontwait);
  }

  void receiveAnswers() {
    for (int n = 0; n < 256; ++n) {
      zmq::message_t m;
      if (!dealer.recv(m, zmq::recv_flags::dontwait)) return;
      // Copied: FlatBuffers wants its offsets aligned, a ZeroMQ message's data
      // need not be.
      const auto* raw = static_cast<const uint8_t*>(m.data());
      const std::vector<uint8_t> bytes(raw, raw + m.size());
      const uint8_t* data = bytes.data();
      flatbuffers::Verifier v(data, bytes.size());
      if (m.more() || !q::MessageBufferHasIdentifier(data) || !q::VerifyMessageBuffer(v)) continue;
      if (const auto* r = q::GetMessage(data)->body_as_ReportAnswer()) {
        takeReport(*r);
        continue;
      }
      const auto* a = q::GetMessage(data)->body_as_EventsAnswer();
      if (!a || a->id() == 0) continue;
      auto it = std::find_if(callers.begin(), callers.end(),
                             [&](const RelayedCall& c) { return c.ask_id == a->id(); });
      if (it == callers.end()) continue;  // its caller left, or it came too late
      it->ask_id = 0;
      if (a->outcome() != q::Outcome::Ok) {
        const std::string why = a->message() ? a->message()->str() : "refused";
        it->unsent = errorReply(static_cast<uint8_t>(a->outcome()), why);
        it->last = true;
        deliver(it);
        continue;
      }
      it->after_row = std::max(it->after_row, a->last_row());
      it->more = a->more();
      const bool done = !it->call.follow && !it->more;
      const bool any = a->lines() && a->lines()->size() > 0;
      if (!any && !done) {
        ask(it, it->call.follow && !it->more);  // an empty hold ended: hold again
        continue;
      }
      it->unsent = linesReply(a->lines(), done);
      it->last = done;
      deliver(it);
    }
  }

  // A report's answer: the one reply of its call. (A refusal before the
  // question was read, Busy, comes as an EventsAnswer and is passed on as
  // any refusal is.)
  void takeReport(const q::ReportAnswer& r) {
    if (r.id() == 0) return;
    auto it = std::find_if(callers.begin(), callers.end(),
                           [&](const RelayedCall& c) { return c.ask_id == r.id(); });
    if (it == callers.end() || !it->call.report) return;
    it->ask_id = 0;
    it->unsent = r.outcome() == q::Outcome::Ok
                     ? reportReply(r.report())
                     : errorReply(static_cast<uint8_t>(r.outcome()),
                                  r.message() ? r.message()->str() : "refused");
    it->last = true;
    deliver(it);
  }

  // Sends the caller its reply if its socket has room; then the next ask, or
  // the end of the call.
  void deliver(std::list<RelayedCall>::iterator it) {
    auto sent = ipc::sendMessage(it->conn, it->unsent->data(), it->unsent->size(),
                                 std::chrono::milliseconds(0));
    if (!sent.ok()) {
      if (sent.error().code() == ErrorCode::kTimeout) return;  // full: POLLOUT says when
      drop(it);
      return;
    }
    it->unsent.reset();
    if (it->last)
      drop(it);
    else
      ask(it, it->call.follow && !it->more);
  }

  void expireAsks() {
    const auto now = Clock::now();
    for (auto it = callers.begin(); it != callers.end();) {
      auto next = std::next(it);
      const auto limit =
          options.answer_timeout + (it->held ? options.hold_timeout : std::chrono::milliseconds(0));
      if (it->ask_id != 0 && now - it->asked_at > limit) {
        if (it->call.follow) {
          ask(it, it->held);  // the link may be back by now; the late answer is ignored
        } else {
          it->ask_id = 0;
          it->unsent =
              errorReply(static_cast<uint8_t>(control::Outcome::Busy),
                         "the aggregator at " + options.endpoint + " did not answer within " +
                             std::to_string(options.answer_timeout.count() / 1000) + " s");
          it->last = true;
          deliver(it);
        }
      }
      it = next;
    }
  }

  void drop(std::list<RelayedCall>::iterator it) {
    {
      std::lock_guard g(mu);
      --active;
      if (!it->admin && --per_uid[it->uid] == 0) per_uid.erase(it->uid);
    }
    callers.erase(it);
  }
};

EventRelay::EventRelay(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

EventRelay::~EventRelay() {
  impl_->stop = true;
  impl_->wake();
  if (impl_->thread.joinable()) impl_->thread.join();
}

Result<std::unique_ptr<EventRelay>> EventRelay::start(const RelayOptions& o) {
  auto impl = std::make_unique<Impl>(o);
  impl->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl->wake_fd < 0) return Error(ErrorCode::kIo, "eventfd for the events relay");
  try {
    auto& d = impl->dealer;
    d.set(zmq::sockopt::linger, 0);
    d.set(zmq::sockopt::curve_serverkey, o.server_public_key);
    d.set(zmq::sockopt::curve_publickey, o.client_keys.public_key);
    d.set(zmq::sockopt::curve_secretkey, o.client_keys.secret_key);
    d.set(zmq::sockopt::heartbeat_ivl, 10000);
    d.set(zmq::sockopt::heartbeat_timeout, 30000);
    d.set(zmq::sockopt::maxmsgsize, int64_t{64} * 1024);
    d.connect(o.endpoint);
  } catch (const zmq::error_t& e) {
    return Error(ErrorCode::kInvalidArgument,
                 "AggregatorQueryAddress " + o.endpoint + ": " + e.what());
  }
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] {
    pthread_setname_np(pthread_self(), "accel-events");
    try {
      raw->run();
    } catch (const zmq::error_t& e) {
      if (!raw->stop) log::error(std::string("events relay: stopped: ") + e.what());
    }
  });
  return std::unique_ptr<EventRelay>(new EventRelay(std::move(impl)));
}

void EventRelay::adopt(ipc::Socket conn, uid_t uid, bool admin, const EventsCall& call) {
  Impl& m = *impl_;
  {
    std::lock_guard g(m.mu);
    const bool full = m.active >= m.options.max_calls;
    const bool mine_full = !admin && m.per_uid[uid] >= m.options.max_calls_per_uid;
    if (!full && !mine_full && !m.stop) {
      ++m.active;
      if (!admin) ++m.per_uid[uid];
      RelayedCall c;
      c.conn = std::move(conn);
      c.uid = uid;
      c.admin = admin;
      c.call = call;
      m.incoming.push_back(std::move(c));
      m.wake();
      return;
    }
    if (!admin && m.per_uid[uid] == 0) m.per_uid.erase(uid);
  }
  auto reply = errorReply(static_cast<uint8_t>(control::Outcome::Busy),
                          "too many events calls on this node now (" +
                              std::to_string(m.options.max_calls_per_uid) + " per user, " +
                              std::to_string(m.options.max_calls) + " in all); try again later");
  (void)ipc::sendMessage(conn, reply.data(), reply.size(), std::chrono::milliseconds(0));
}

size_t EventRelay::calls() const {
  std::lock_guard g(impl_->mu);
  return impl_->active;
}

}  // namespace accel::agentd
