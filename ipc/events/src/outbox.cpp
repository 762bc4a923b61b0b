// Outbox = spool + a sender thread + a syncer thread. The sender is the only
// code that talks to ZeroMQ; cppzmq exceptions stop here and become counters
// and link state. The syncer is the only code that fdatasyncs the spool.
#include "accel/events/outbox.h"

#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <zmq.hpp>

#include "accel/common/clock.h"
#include "accel/events/reconnect_backoff.h"
#include "accel/events/socket_options.h"

namespace accel::event {
namespace {

constexpr int kSendBatch = 4096;          // envelopes per loop turn, so acks are read in between
constexpr uint64_t kMaxInFlight = 50000;  // unacknowledged envelopes handed to zmq
// The sender sleeps until publish(), an ack, a link event, room on the socket
// or the stop wakes it, or until its next deadline (the next attempt, the
// attempt's timeout, the acknowledgement timeout); this bound is only a
// safety net. An agent whose aggregator is away does not poll: thousands of
// nodes waiting for a restarted aggregator would otherwise keep it from
// running.
constexpr int kIdlePollMs = 60000;

}  // namespace

// Owns the DEALER socket, its monitor and the send cursor (the sender
// thread), and the spool's fdatasync (the syncer thread). The two are apart
// so that the sender never waits on the disk: while the syncer makes the
// newest events durable, the sender streams those synced before and reads
// acknowledgements. The syncer wakes the sender after every sync.
class Outbox::Sender {
 public:
  Sender(const OutboxOptions& o, Spool& spool)
      : o_(o),
        spool_(spool),
        wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        backoff_(o.reconnect_min, o.reconnect_max, std::random_device{}()) {
    ACCEL_CHECK(wake_fd_ >= 0);
    syncer_ = std::thread([this] { syncLoop(); });
    thread_ = std::thread([this] { run(); });
  }
  ~Sender() {
    stop_ = true;
    wake();
    thread_.join();
    {
      std::lock_guard lock(sync_mu_);
      sync_stop_ = true;
    }
    sync_cv_.notify_one();
    syncer_.join();  // its last sync covers every append made so far
    ::close(wake_fd_);
  }
  void wake() {
    uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
  using Clock = std::chrono::steady_clock;
  // After an append: the syncer makes it durable, then the sender sends it.
  void appended() {
    {
      std::lock_guard lock(sync_mu_);
      if (sync_due_) return;
      sync_due_ = Clock::now() + o_.sync_delay;
    }
    sync_cv_.notify_one();
  }
  void fill(OutboxStats& s) const {
    s.sent = sent_;
    s.acked = acked_;
    s.reconnects = reconnects_;
    s.attempts = attempts_;
    s.io_errors = io_errors_;
    s.refused = refused_;
    s.syncs = syncs_;
    s.slowest_sync_us = slowest_sync_us_;
    s.link_up = link_up_;
  }

 private:
  // A zmq error other than the context's end (EINTR from a signal, a socket
  // error) is counted and the loop carries on: a sender that ended here would
  // leave every later event spooled and unsent until the next start.
  void run() {
    while (!stop_) {
      try {
        while (!stop_) turn();
      } catch (const zmq::error_t& e) {
        if (e.num() == ETERM) return;
        ++io_errors_;
        if (e.num() != EINTR) {
          dropLink();  // a socket in an unknown state: start again with a new one
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      }
    }
  }

  // Sleeps until something is appended (never wakes while idle), lets the
  // appends of the next sync_delay share one fdatasync, syncs, wakes the
  // sender. A failed sync is retried a second later.
  void syncLoop() {
    std::unique_lock lock(sync_mu_);
    while (true) {
      sync_cv_.wait(lock, [this] { return sync_due_.has_value() || sync_stop_; });
      if (sync_stop_) break;
      sync_cv_.wait_until(lock, *sync_due_, [this] { return sync_stop_; });
      if (sync_stop_) break;
      sync_due_.reset();
      lock.unlock();
      const auto t0 = Clock::now();
      bool ok = spool_.sync().ok();
      const auto us = static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
      if (us > slowest_sync_us_) slowest_sync_us_ = us;  // only this thread writes it
      ++syncs_;
      if (ok) wake();
      lock.lock();
      if (!ok) {
        ++io_errors_;
        if (!sync_due_) sync_due_ = Clock::now() + std::chrono::seconds(1);
      }
    }
    lock.unlock();
    if (!spool_.sync().ok()) ++io_errors_;
  }

  // One attempt: a new socket and its monitor. zmq's own reconnect is off
  // (its jitter is at most reconnect_ivl, whatever the back-off): when this
  // attempt fails or its link is lost, dropLink() closes the socket and the
  // back-off says when the next one is made.
  void connect() {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    sock_.emplace(ctx_, zmq::socket_type::dealer);
    sock_->set(zmq::sockopt::linger, 0);
    sock_->set(zmq::sockopt::immediate, 1);  // no queueing into a pipe that has no peer yet
    sock_->set(zmq::sockopt::reconnect_ivl, -1);
    sock_->set(zmq::sockopt::connect_timeout, static_cast<int>(o_.attempt_timeout.count() / 2));
    sock_->set(zmq::sockopt::handshake_ivl, static_cast<int>(o_.attempt_timeout.count() / 2));
    if (o_.ping_interval.count() > 0) {
      sock_->set(zmq::sockopt::heartbeat_ivl, static_cast<int>(o_.ping_interval.count()));
      sock_->set(zmq::sockopt::heartbeat_timeout, static_cast<int>(o_.ping_timeout.count()));
      // No ZMQ_HEARTBEAT_TTL: it makes the aggregator's zmq arm a timer at
      // each of our pings and cancel it at our next message, and zmq's timer
      // cancel walks all of its timers (libzmq 4.3): with 10,000 nodes that
      // took most of its I/O thread. The aggregator pings the nodes itself
      // (its PingInterval) to find the silent ones.
    }
    setTcpKeepalive(*sock_, o_.tcp_keepalive);
    sock_->set(zmq::sockopt::sndhwm, 10000);
    sock_->set(zmq::sockopt::maxmsgsize, int64_t{4096});  // acks are tiny
    sock_->set(zmq::sockopt::curve_serverkey, o_.server_public_key);
    sock_->set(zmq::sockopt::curve_publickey, o_.client_keys.public_key);
    sock_->set(zmq::sockopt::curve_secretkey, o_.client_keys.secret_key);
    // A name per attempt: the last attempt's monitor endpoint may still be
    // bound while zmq finishes closing its socket.
    std::string mon = "inproc://accel-outbox-monitor-" + std::to_string(attempts_ + 1);
    ACCEL_CHECK(zmq_socket_monitor(sock_->handle(), mon.c_str(),
                                   ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED |
                                       ZMQ_EVENT_CLOSED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                       ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                       ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) == 0);
    monitor_.emplace(ctx_, zmq::socket_type::pair);
    monitor_->connect(mon);
    rewind();  // a new link sends from the oldest unacknowledged event
    ++attempts_;
    attempt_started_ = Clock::now();
    sock_->connect(o_.endpoint);
  }

  // The attempt failed or the link is gone: close the socket (what was in
  // flight is sent again on the next link) and draw the wait.
  void dropLink() {
    if (link_up_) ++reconnects_;
    link_up_ = false;
    // Stop the monitor before closing either socket: zmq's I/O thread sends
    // monitor events with a blocking send, and one sent towards a reader
    // already closed blocks that thread, and with it every later attempt of
    // this context, for good (seen with thousands of nodes in the scale bench).
    if (sock_) (void)zmq_socket_monitor(sock_->handle(), nullptr, 0);
    sock_.reset();
    monitor_.reset();
    rewind();
    retry_at_ = Clock::now() + backoff_.next();
  }

  // No socket and the wait is over: the next attempt.
  void connectIfDue() {
    if (o_.endpoint.empty() || sock_ || Clock::now() < retry_at_) return;
    connect();
  }

  // Milliseconds until the sender's next deadline, for the poll: the next
  // attempt (no socket), the attempt's timeout (no link yet), the
  // acknowledgement timeout (events in flight).
  int msUntilDeadline() const {
    std::optional<Clock::time_point> due;
    if (!o_.endpoint.empty() && !sock_)
      due = retry_at_;
    else if (sock_ && !link_up_)
      due = attempt_started_ + o_.attempt_timeout;
    else if (in_flight_ > 0)
      due = last_progress_ + o_.ack_timeout;
    if (!due) return kIdlePollMs;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*due - Clock::now()).count();
    return static_cast<int>(std::clamp<int64_t>(left + 1, 0, kIdlePollMs));
  }

  void turn() {
    drainWake();
    connectIfDue();
    Sending state = sock_ ? sendSome() : Sending::kIdle;
    const bool blocked = state == Sending::kBlocked;
    std::vector<zmq::pollitem_t> items{{nullptr, wake_fd_, ZMQ_POLLIN, 0}};
    if (sock_) {
      items.push_back(
          {sock_->handle(), 0, static_cast<short>(ZMQ_POLLIN | (blocked ? ZMQ_POLLOUT : 0)), 0});
      items.push_back({monitor_->handle(), 0, ZMQ_POLLIN, 0});
    }
    int wait_ms = state == Sending::kMore ? 0 : msUntilDeadline();
    zmq::poll(items, std::chrono::milliseconds(wait_ms));
    if (!sock_) return;
    readAcks();
    if (!readMonitor()) return;
    if (!link_up_ && Clock::now() - attempt_started_ > o_.attempt_timeout) {
      dropLink();
      return;
    }
    checkAckTimeout();
  }

  void drainWake() {
    uint64_t n = 0;
    (void)!::read(wake_fd_, &n, sizeof n);
  }

  // kIdle: nothing (more) to send now or the window is full; kBlocked: zmq
  // would block (no peer, or the high-water mark); kMore: the batch ended.
  enum class Sending { kIdle, kBlocked, kMore };

  Sending sendSome() {
    for (int i = 0; i < kSendBatch; ++i) {
      if (in_flight_ >= kMaxInFlight) return Sending::kIdle;
      if (!pending_) {
        auto rec = spool_.next(cursor_);
        if (!rec.ok()) {
          ++io_errors_;
          return Sending::kIdle;
        }
        if (!*rec) return Sending::kIdle;
        pending_ = std::move((*rec)->payload);
        pending_meta_ = {(*rec)->meta.epoch, (*rec)->meta.seq};
        if (skipped_.contains(pending_meta_)) {  // refused for good: never sent again
          pending_.reset();
          continue;
        }
      }
      zmq::message_t msg(pending_->data(), pending_->size());
      if (!sock_->send(msg, zmq::send_flags::dontwait)) return Sending::kBlocked;
      pending_.reset();
      ++sent_;
      // The acknowledgement timeout counts from the first event in flight,
      // not from the last turn before it (which may be a long sleep ago).
      if (in_flight_ == 0) last_progress_ = std::chrono::steady_clock::now();
      ++in_flight_;
    }
    return Sending::kMore;
  }

  void readAcks() {
    zmq::message_t msg;
    while (sock_->recv(msg, zmq::recv_flags::dontwait)) {
      std::span<const uint8_t> bytes{static_cast<const uint8_t*>(msg.data()), msg.size()};
      auto ack = decodeAck(bytes);
      if (!ack.ok()) {
        if (auto nack = decodeNack(bytes); nack.ok()) refused(*nack);
        continue;  // anything else: a peer that is not our aggregator; nothing to release
      }
      while (!skipped_.empty() && skipped_.begin()->first == ack->epoch &&
             skipped_.begin()->second <= ack->seq)
        skipped_.erase(skipped_.begin());
      auto done = spool_.acknowledge(ack->epoch, ack->seq);
      if (!done.ok()) {
        ++io_errors_;
        continue;
      }
      uint64_t released = *done;
      if (released == 0) continue;
      acked_ += released;
      in_flight_ = in_flight_ > released ? in_flight_ - released : 0;
      last_progress_ = std::chrono::steady_clock::now();
    }
  }

  // A refused frame is counted and reported. One the aggregator skipped is
  // left out of every resend until an Ack releases it; the others (a key or
  // node name the aggregator does not accept) stay spooled for a resend once
  // the configuration is fixed.
  void refused(const Nack& nack) {
    ++refused_;
    if (nack.skipped && nack.seq != 0 && skipped_.size() < kMaxSkipped)
      skipped_.insert({nack.epoch, nack.seq});
    if (o_.on_refused) o_.on_refused(nack);
  }

  // False when the link failed and the socket is gone (dropLink).
  bool readMonitor() {
    zmq::message_t ev, addr;
    while (monitor_->recv(ev, zmq::recv_flags::dontwait)) {
      if (ev.more()) (void)monitor_->recv(addr, zmq::recv_flags::none);
      if (ev.size() < 2) continue;
      uint16_t id = 0;
      std::memcpy(&id, ev.data(), sizeof id);
      if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        // No rewind here: this socket's pipe is new (connect() started it
        // from the oldest unacknowledged event), and zmq may already have
        // taken events into it before this event is read; going back would
        // send those twice.
        link_up_ = true;
        backoff_.reset();
      } else {
        // Refused, closed, lost (a ping unanswered too) or a failed
        // handshake: with zmq's reconnect off this socket is done for.
        dropLink();
        return false;
      }
    }
    return true;
  }

  void checkAckTimeout() {
    auto now = std::chrono::steady_clock::now();
    if (in_flight_ == 0) {
      last_progress_ = now;
      return;
    }
    if (now - last_progress_ > o_.ack_timeout) rewind();
  }

  void rewind() {
    cursor_ = spool_.head();
    pending_.reset();
    in_flight_ = 0;
    last_progress_ = std::chrono::steady_clock::now();
  }

  const OutboxOptions& o_;
  Spool& spool_;
  int wake_fd_;
  std::atomic<bool> stop_{false};
  zmq::context_t ctx_{1};
  std::optional<zmq::socket_t> sock_, monitor_;
  ReconnectBackoff backoff_;
  Clock::time_point retry_at_{};         // no socket: the next attempt is due then
  Clock::time_point attempt_started_{};  // the socket's connect()
  SpoolPos cursor_;
  std::optional<std::vector<uint8_t>> pending_;
  std::pair<uint64_t, uint64_t> pending_meta_;  // its epoch and seq
  static constexpr size_t kMaxSkipped = 65536;
  std::set<std::pair<uint64_t, uint64_t>>
      skipped_;  // (epoch, seq) refused and skipped, not yet acknowledged
  uint64_t in_flight_ = 0;
  std::chrono::steady_clock::time_point last_progress_ = std::chrono::steady_clock::now();
  std::atomic<uint64_t> sent_{0}, acked_{0}, reconnects_{0}, attempts_{0}, io_errors_{0},
      refused_{0}, syncs_{0}, slowest_sync_us_{0};
  std::atomic<bool> link_up_{false};
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;
  std::optional<Clock::time_point> sync_due_;  // set: appends wait for a sync, due then
  bool sync_stop_ = false;
  std::thread syncer_, thread_;  // last: start after every member above exists
};

Outbox::Outbox(OutboxOptions options) : options_(std::move(options)) {}

Outbox::~Outbox() {
  // A destructor must not throw; what could (a thread that cannot be joined) is said on stderr.
  try {
    stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "event outbox: stopping: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "event outbox: stopping: an unknown exception\n");
  }
}

OutboxStats Outbox::shutdown() {
  stop();
  return stats();
}

void Outbox::stop() {
  {
    std::unique_lock lock(publish_mu_);
    if (!stopped_) {
      stopped_ = true;
      retry_cv_.notify_all();
      lock.unlock();
      if (retry_thread_.joinable()) retry_thread_.join();
      lock.lock();
      drainHeldLocked();  // the sender's stop syncs what this appends
      lost_at_shutdown_ = held_.size();
      dropped_lifecycle_ += held_.size();
      held_.clear();
      held_bytes_ = 0;
      held_count_ = 0;
      held_bytes_stat_ = 0;
    }
  }
  sender_.reset();
}

Result<std::unique_ptr<Outbox>> Outbox::start(OutboxOptions options) {
  if (options.node.empty()) return Error(ErrorCode::kInvalidArgument, "outbox: node name is empty");
  if (!options.endpoint.empty() &&
      (!isZ85Key(options.server_public_key) || !isZ85Key(options.client_keys.public_key) ||
       !isZ85Key(options.client_keys.secret_key)))
    return Error(ErrorCode::kInvalidArgument, "outbox: CURVE keys must be 40 Z85 characters");
  std::unique_ptr<Outbox> box(new Outbox(std::move(options)));
  auto spool = Spool::open({box->options_.spool_dir, box->options_.spool_max_bytes});
  if (!spool.ok()) return spool.error();
  box->spool_ = std::move(*spool);
  auto epoch = raiseEpoch(box->options_.spool_dir, box->spool_->recovery().max_epoch);
  if (!epoch.ok()) return epoch.error().context("agent epoch");
  box->epoch_ = *epoch;
  box->sender_ = std::make_unique<Sender>(box->options_, *box->spool_);
  Outbox* raw = box.get();
  box->retry_thread_ = std::thread([raw] { raw->retryLoop(); });
  return box;
}

Status Outbox::publish(const Event& event) {
  Header h{options_.node, epoch_, 0, wallNs(), monoNs()};
  const Priority priority = priorityOf(event);
  const bool telemetry = priority == Priority::kTelemetry;
  std::unique_lock lock(publish_mu_);
  if (stopped_) {
    (telemetry ? dropped_telemetry_ : dropped_lifecycle_)++;
    return Error(ErrorCode::kUnavailable,
                 std::string(kindName(event)) + " event lost: the outbox is stopped");
  }
  drainHeldLocked();
  h.seq = next_seq_;
  std::vector<uint8_t> bytes = encode(h, event);
  if (bytes.size() > kMaxEnvelopeBytes)
    return Error(ErrorCode::kInvalidArgument,
                 std::string(kindName(event)) + " event too large to send");
  if (held_.empty()) {
    auto stored = appendLocked(h, priority, bytes);
    if (stored.ok() && *stored == Appended::kStored) {
      lock.unlock();
      sender_->appended();
      return okStatus();
    }
  }
  if (telemetry) {  // dropping it is the policy; it never overtakes a held event
    ++dropped_telemetry_;
    return okStatus();
  }
  return holdLocked(event, h, bytes.size());
}

// Appends one envelope with the next sequence number (the caller encoded it
// with next_seq_); the caller tells the syncer.
Result<Appended> Outbox::appendLocked(const Header& h, Priority priority,
                                      const std::vector<uint8_t>& bytes) {
  auto stored = spool_->append({epoch_, h.seq, priority}, bytes);
  if (stored.ok() && *stored == Appended::kStored) {
    ++next_seq_;
    ++published_;
  }
  return stored;
}

Status Outbox::holdLocked(const Event& event, const Header& h, uint64_t bytes) {
  if (held_.size() >= options_.held_max_events || held_bytes_ + bytes > options_.held_max_bytes) {
    ++dropped_lifecycle_;
    return Error(ErrorCode::kUnavailable,
                 std::string(kindName(event)) + " event lost: event spool full (" +
                     std::to_string(spool_->usedBytes()) + " bytes) and " +
                     std::to_string(held_.size()) + " events held in memory");
  }
  held_.push_back({event, h, bytes});
  held_bytes_ += bytes;
  ++held_total_;
  held_count_ = held_.size();
  held_bytes_stat_ = held_bytes_;
  if (held_.size() == 1) retry_cv_.notify_all();
  return okStatus();
}

// Appends held events in order until one does not fit; each gets its
// sequence number now, so the stream stays gap-free.
void Outbox::drainHeldLocked() {
  bool any = false;
  while (!held_.empty()) {
    Held& front = held_.front();
    front.header.seq = next_seq_;
    std::vector<uint8_t> bytes = encode(front.header, front.event);
    auto stored = appendLocked(front.header, priorityOf(front.event), bytes);
    if (!stored.ok() || *stored != Appended::kStored) break;
    held_bytes_ -= front.bytes;
    held_.pop_front();
    any = true;
  }
  held_count_ = held_.size();
  held_bytes_stat_ = held_bytes_;
  if (any) sender_->appended();
}

// Sleeps while nothing is held; otherwise retries every held_retry.
void Outbox::retryLoop() {
  std::unique_lock lock(publish_mu_);
  while (!stopped_) {
    if (held_.empty()) {
      retry_cv_.wait(lock, [this] { return stopped_ || !held_.empty(); });
      continue;
    }
    if (retry_cv_.wait_for(lock, options_.held_retry, [this] { return stopped_; })) break;
    drainHeldLocked();
  }
}

OutboxStats Outbox::stats() const {
  OutboxStats s;
  s.epoch = epoch_;
  s.published = published_;
  s.spooled_bytes = spool_->usedBytes();
  s.backlog = spool_->backlog();
  s.dropped_telemetry = dropped_telemetry_;
  s.dropped_lifecycle = dropped_lifecycle_;
  s.held = held_count_;
  s.held_bytes = held_bytes_stat_;
  s.held_total = held_total_;
  s.lost_at_shutdown = lost_at_shutdown_;
  s.recovered = spool_->recovery().records;
  s.recovery_dropped_bytes = spool_->recovery().dropped_bytes;
  if (sender_) sender_->fill(s);
  return s;
}

std::string describe(const OutboxStats& s) {
  std::string out = "events: link ";
  out += s.link_up ? "up" : "down";
  out += ", backlog " + std::to_string(s.backlog) + " (" + std::to_string(s.spooled_bytes >> 10) +
         " KiB)";
  out += ", sent " + std::to_string(s.sent) + ", acked " + std::to_string(s.acked);
  if (s.held)
    out += ", held " + std::to_string(s.held) + " lifecycle (" +
           std::to_string(s.held_bytes >> 10) + " KiB) waiting for spool space";
  if (s.dropped_telemetry || s.dropped_lifecycle)
    out += ", dropped " + std::to_string(s.dropped_telemetry) + " telemetry/" +
           std::to_string(s.dropped_lifecycle) + " lifecycle";
  if (s.refused) out += ", refused by the aggregator " + std::to_string(s.refused);
  if (s.lost_at_shutdown)
    out += " (" + std::to_string(s.lost_at_shutdown) + " held lifecycle lost at shutdown)";
  return out;
}

}  // namespace accel::event
