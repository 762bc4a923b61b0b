#include "accel/aggregator/server.h"

#include <netdb.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <zmq.hpp>

#include "accel/aggregator/batch_writer.h"
#include "accel/aggregator/event_queries.h"
#include "accel/common/clock.h"
#include "accel/events/socket_options.h"

namespace accel::aggregator {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
// The ROUTER's socket monitor: connections accepted and closed
// (accel_aggregator_nodes_connected).
constexpr const char* kMonitorEndpoint = "inproc://accel-aggregator.monitor";
// Most monitor reports read before the ZAP thread looks at ZAP again.
constexpr size_t kMonitorBatch = 1024;
// How many of the newest (peer, stream) pairs a frame is checked against
// before its pair is added to the batch's list of acknowledgements.
constexpr size_t kRecentAcks = 16;

using PeerStream = std::pair<std::string, StreamKey>;  // ROUTER identity, stream

// The ZAP reply's metadata (ZMTP property format: name length, name, value
// length in 4 bytes big-endian, value): the key the peer authenticated with,
// so that each frame can be checked against the allow list in force.
constexpr const char* kKeyProperty = "Curve-Key";

std::string keyMetadata(const std::string& z85) {
  std::string out(1, static_cast<char>(std::string_view(kKeyProperty).size()));
  out += kKeyProperty;
  uint32_t n = static_cast<uint32_t>(z85.size());
  for (int shift : {24, 16, 8, 0}) out += static_cast<char>((n >> shift) & 0xff);
  return out + z85;
}

// Where a peer comes from: the numeric address of a TCP peer ("10.0.0.7", as
// ZAP names it), the user of a local one on ipc:// ("uid 1000"); empty for a
// descriptor that is no longer a socket.
std::string peerAddress(int fd) {
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return {};
  if (sa.ss_family == AF_UNIX) {
    ucred cred{};
    socklen_t clen = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0) return {};
    return "uid " + std::to_string(cred.uid);
  }
  if (sa.ss_family != AF_INET && sa.ss_family != AF_INET6) return {};
  char host[NI_MAXHOST];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&sa), len, host, sizeof host, nullptr, 0,
                    NI_NUMERICHOST) != 0)
    return {};
  return host;
}

// The bounds per source address of ServerOptions::per_address, on the ZAP
// thread: fed with the connections the monitor reports accepted and
// closed (by descriptor) and the addresses whose keys ZAP refused; says which
// accepted connection is to be cut. Sources with nothing open, no bar and no
// recent refusal are forgotten, so that many addresses cannot grow it.
class AddressGuard {
 public:
  using Clock = std::chrono::steady_clock;
  explicit AddressGuard(size_t per_address) : cap_(per_address) {}

  // A connection from `address` was accepted on `fd`: true if it is to be cut.
  bool accepted(int fd, const std::string& address, Clock::time_point now) {
    if (cap_ == 0) return false;
    sweep(now);
    Source& s = sources_[address];
    if (now - s.second_start >= std::chrono::seconds(1)) s.second_start = now, s.opened = 0;
    if (++s.opened > cap_) s.barred_until = now + Server::kBarTime;
    if (now < s.barred_until || s.open >= cap_) return true;
    ++s.open;
    by_fd_[fd] = address;
    return false;
  }
  void closed(int fd) {
    auto it = by_fd_.find(fd);
    if (it == by_fd_.end()) return;
    auto s = sources_.find(it->second);
    if (s != sources_.end() && s->second.open > 0) --s->second.open;
    by_fd_.erase(it);
  }
  // ZAP refused a key that `address` presented.
  void refused(const std::string& address, Clock::time_point now) {
    if (cap_ == 0) return;
    Source& s = sources_[address];
    s.refusals.push_back(now);
    while (!s.refusals.empty() && now - s.refusals.front() > Server::kRefusalWindow)
      s.refusals.pop_front();
    if (s.refusals.size() >= size_t(Server::kRefusalsToBar)) {
      s.barred_until = now + Server::kBarTime;
      s.refusals.clear();
    }
  }

 private:
  struct Source {
    size_t open = 0;    // accepted, not yet closed
    size_t opened = 0;  // accepted since second_start
    Clock::time_point second_start{};
    std::deque<Clock::time_point> refusals;
    Clock::time_point barred_until{};
  };
  void sweep(Clock::time_point now) {
    if (now - last_sweep_ < Server::kRefusalWindow) return;
    last_sweep_ = now;
    std::erase_if(sources_, [&](const auto& e) {
      const Source& s = e.second;
      return s.open == 0 && now >= s.barred_until &&
             (s.refusals.empty() || now - s.refusals.back() > Server::kRefusalWindow);
    });
  }
  size_t cap_;
  Clock::time_point last_sweep_{};
  std::unordered_map<int, std::string> by_fd_;
  std::unordered_map<std::string, Source> sources_;
};

}  // namespace

struct Server::Impl {
  using Clock = std::chrono::steady_clock;
  ServerOptions options;
  Ingestor& ingestor;
  Metrics& metrics;
  // The nodes' links on `ctx`; the events queries on `query_ctx`, so that
  // neither's handshakes hold up the other's I/O thread. Each context has its
  // own ZAP socket, both answered by the ZAP thread.
  zmq::context_t ctx{std::max(1, options.io_threads)};
  zmq::socket_t zap{ctx, zmq::socket_type::rep};
  zmq::socket_t router{ctx, zmq::socket_type::router};
  zmq::socket_t monitor{ctx, zmq::socket_type::pair};
  zmq::context_t query_ctx{1};
  zmq::socket_t query_zap{query_ctx, zmq::socket_type::rep};
  AddressGuard guard{options.per_address};  // the ZAP thread's
  std::atomic<bool> stop{false};
  std::thread zap_thread;
  BatchWriter writer;
  // The open batch: frames taken since the last seal, the (peer, stream)
  // pairs they are to be answered on, and when its first frame was taken.
  size_t open_frames = 0;
  std::vector<PeerStream> open_acks;
  std::optional<Clock::time_point> open_since;
  std::vector<PeerStream> flight_acks;  // answered when the writer's batch is committed
  // The allow list in force: `allow` for this thread, `zap_allow` (under
  // allow_mu) for the ZAP thread; both swapped by reloadAllowList().
  std::shared_ptr<const AllowList> allow;
  std::mutex allow_mu;
  std::shared_ptr<const AllowList> zap_allow;
  std::vector<Rejection> rejections;
  uint64_t rejections_dropped = 0;
  // Last, so that it stops before the context and sockets go.
  std::unique_ptr<EventQueries> queries;

  Impl(const ServerOptions& o, Ingestor& i, Metrics& m)
      : options(o), ingestor(i), metrics(m), writer(i.store()) {}

  // The thread beside the loop: ZAP (RFC 27) for both contexts, answering
  // each CURVE handshake with 200 and the node name as User-Id, or 400 for a
  // key that is not on the list; and the node socket's monitor, which
  // AddressGuard weighs. Neither waits behind ingest, nor holds it up when
  // a stranger's connections come by the thousand.
  void serveZap() {
    while (!stop) {
      zmq::pollitem_t items[3] = {{zap.handle(), 0, ZMQ_POLLIN, 0},
                                  {query_zap.handle(), 0, ZMQ_POLLIN, 0},
                                  {monitor.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 3, std::chrono::milliseconds(100));
      if (items[2].revents & ZMQ_POLLIN) watchConnections();
      if (items[0].revents & ZMQ_POLLIN) answerZap(zap, true);
      if (items[1].revents & ZMQ_POLLIN) answerZap(query_zap, false);
    }
  }

  // One ZAP request on `sock`; `nodes`: the node socket's, whose refused
  // addresses go to the AddressGuard.
  void answerZap(zmq::socket_t& sock, bool nodes) {
    std::vector<zmq::message_t> req;
    do {
      req.emplace_back();
      (void)sock.recv(req.back(), zmq::recv_flags::none);
    } while (req.back().more());
    std::string status = "400", text = "unknown key", user, metadata;
    if (req.size() >= 7 && req[5].to_string() == "CURVE" && req[6].size() == 32) {
      char z85[41] = {};
      zmq_z85_encode(z85, static_cast<const uint8_t*>(req[6].data()), 32);
      std::shared_ptr<const AllowList> list;
      {
        std::lock_guard lock(allow_mu);
        list = zap_allow;
      }
      auto it = list->node_by_key.find(z85);
      if (it != list->node_by_key.end())
        status = "200", text = "OK", user = it->second, metadata = keyMetadata(z85);
    }
    if (status != "200") {
      metrics.reject(Reject::kUnknownKey);
      if (nodes && req.size() > 3 && req[3].size() > 0)
        guard.refused(req[3].to_string(), Clock::now());
    }
    std::string id = req.size() > 1 ? req[1].to_string() : std::string();
    sock.send(zmq::buffer(std::string("1.0")), zmq::send_flags::sndmore);
    sock.send(zmq::buffer(id), zmq::send_flags::sndmore);
    sock.send(zmq::buffer(status), zmq::send_flags::sndmore);
    sock.send(zmq::buffer(text), zmq::send_flags::sndmore);
    sock.send(zmq::buffer(user), zmq::send_flags::sndmore);
    sock.send(zmq::buffer(metadata), zmq::send_flags::none);
  }

  // Sleeps until there is something to do, at most `wait`: a frame that
  // fits the open batch, the writer's outcome, or the open batch falling due.
  void waitForWork(std::chrono::milliseconds wait) {
    bool full = open_frames >= options.batch_max;
    if (open_since && !writer.busy()) {
      if (full) return;
      auto due = std::chrono::ceil<std::chrono::milliseconds>(*open_since + options.batch_wait -
                                                              Clock::now());
      wait = std::clamp(due, std::chrono::milliseconds(0), wait);
    }
    zmq::pollitem_t items[2] = {{nullptr, writer.readyFd(), ZMQ_POLLIN, 0},
                                {router.handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, full ? 1 : 2, wait);
  }

  // What the monitor reports: connections accepted and closed (counted, and
  // weighed by the AddressGuard), and accepts that failed (counted by errno).
  // Each report is two frames: event number (2 bytes) and value (4 bytes:
  // the descriptor, or the errno of a failure), then the endpoint. All that
  // has arrived is read first, so that a connection already closed again is
  // not cut: its descriptor may be another's by now.
  void watchConnections() {
    std::vector<std::pair<uint16_t, int32_t>> events;
    // A bounded batch, so that the handshakes waiting for ZAP are answered
    // even while failed accepts (EMFILE) are reported without pause.
    while (events.size() < kMonitorBatch) {
      zmq::message_t event, endpoint;
      if (!monitor.recv(event, zmq::recv_flags::dontwait)) break;
      if (event.more()) (void)monitor.recv(endpoint, zmq::recv_flags::none);
      if (event.size() < 6) continue;
      uint16_t id;
      int32_t value;
      std::memcpy(&id, event.data(), sizeof id);
      std::memcpy(&value, static_cast<const char*>(event.data()) + 2, sizeof value);
      events.emplace_back(id, value);
    }
    auto now = Clock::now();
    for (size_t i = 0; i < events.size(); ++i) {
      const auto id = events[i].first;
      const auto value = events[i].second;
      if (id == ZMQ_EVENT_ACCEPTED) {
        ++metrics.connections;
        bool gone = std::any_of(
            events.begin() + std::ptrdiff_t(i) + 1, events.end(),
            [&](const auto& e) { return e.first == ZMQ_EVENT_DISCONNECTED && e.second == value; });
        if (!gone) admit(value, now);
      } else if (id == ZMQ_EVENT_DISCONNECTED) {
        --metrics.connections;
        guard.closed(value);
      } else if (id == ZMQ_EVENT_ACCEPT_FAILED) {
        metrics.acceptFailed(value);
      }
    }
  }

  // A connection just accepted on `fd`: cut at once if its address is over
  // its bounds. shutdown(), not close(): the descriptor stays libzmq's, whose
  // I/O thread sees the end of the stream and closes it itself.
  void admit(int fd, Clock::time_point now) {
    std::string address = peerAddress(fd);
    if (address.empty() || !guard.accepted(fd, address, now)) return;
    ::shutdown(fd, SHUT_RDWR);
    metrics.reject(Reject::kAddressLimit);
  }

  // Takes in the frames that have arrived, as many as the open batch holds.
  void receive() {
    if (open_frames >= options.batch_max) return;
    size_t n = drain(options.batch_max - open_frames, open_acks);
    if (n > 0 && !open_since) open_since = Clock::now();
    open_frames += n;
  }

  // slurmctld's answers about held runs (Ingestor::settle): what they change
  // is saved with the open batch, and a batch is opened for it if none is.
  void settle() {
    if (ingestor.settle(wallNs()) && !open_since) open_since = Clock::now();
  }

  // Hands the open batch to the writer once it is full or batch_wait old,
  // and the writer is free.
  void submitIfDue() {
    if (writer.busy() || !open_since) return;
    if (open_frames < options.batch_max && Clock::now() < *open_since + options.batch_wait) return;
    auto batch = ingestor.seal(wallNs());
    if (batch) {
      writer.submit(std::move(*batch));
      flight_acks = std::move(open_acks);
    } else {
      sendAcks(open_acks);  // duplicates only: nothing to wait for
    }
    resetOpen();
  }

  // The writer's outcome, if there is one (`block`: wait for it). Acks go
  // out only after a successful commit; after a failure the open batch is
  // gone too (Ingestor::finish) and agents resend both.
  Status collect(bool block) {
    auto done = writer.take(block);
    if (!done) return okStatus();
    ingestor.finish(done->first, done->second);
    if (done->second.ok()) {
      sendAcks(flight_acks);
      if (queries) queries->committed();
    } else
      resetOpen();
    flight_acks.clear();
    return done->second;
  }

  void resetOpen() {
    open_frames = 0;
    open_acks.clear();
    open_since.reset();
  }

  // Receives and ingests up to `limit` frames that have already arrived,
  // without waiting. Returns how many frames were taken off the socket.
  size_t drain(size_t limit, std::vector<PeerStream>& acks) {
    int64_t now = wallNs();
    size_t n = 0;
    for (; n < limit; ++n) {
      zmq::message_t identity, payload;
      if (!router.recv(identity, zmq::recv_flags::dontwait)) break;
      if (!identity.more()) continue;  // ROUTER always sends identity + parts; defensive
      (void)router.recv(payload, zmq::recv_flags::none);
      if (payload.more()) {  // an envelope is exactly one part; drain and refuse anything longer
        skipParts();
        metrics.reject(Reject::kFrames);
        continue;
      }
      const char* user = zmq_msg_gets(payload.handle(), "User-Id");
      std::string_view peer = identity.to_string_view();
      if (user && !stillAllowed(payload, user)) {
        metrics.reject(Reject::kKeyRevoked);
        refused(peer, {user,
                       {0, 0, event::NackReason::kKeyRevoked, false,
                        "the key is no longer on the allow list"}});
        continue;
      }
      Offer offer =
          ingestor.offer(user ? std::string_view(user) : std::string_view(),
                         {static_cast<const uint8_t*>(payload.data()), payload.size()}, now);
      if (offer.nack) refused(peer, {user ? user : "", std::move(*offer.nack), offer.job_id});
      auto& key = offer.ack;
      if (!key) continue;
      // ROUTER takes frames from its peers in turn: a (peer, stream) is
      // remembered unless it is among the last few (sendAcks drops the rest).
      auto recent = acks.end() - std::ptrdiff_t(std::min<size_t>(acks.size(), kRecentAcks));
      if (std::none_of(recent, acks.end(),
                       [&](const PeerStream& a) { return a.second == *key && a.first == peer; }))
        acks.emplace_back(std::string(peer), std::move(*key));
    }
    return n;
  }

  // The key the peer authenticated with is still on the list as its node's.
  bool stillAllowed(const zmq::message_t& payload, const char* user) {
    const char* key = zmq_msg_gets(payload.handle(), kKeyProperty);
    return key && allow->admits(key, user);
  }

  // Answers a refused frame at once and keeps it for the daemon's log.
  void refused(std::string_view peer, Rejection r) {
    auto nack = event::encodeNack(r.nack);
    if (router.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait))
      (void)router.send(zmq::buffer(nack), zmq::send_flags::dontwait);
    if (rejections.size() < kKeptRejections)
      rejections.push_back(std::move(r));
    else
      ++rejections_dropped;
  }

  void useAllowList(std::shared_ptr<const AllowList> list) {
    allow = list;
    std::lock_guard lock(allow_mu);
    zap_allow = std::move(list);
  }

  void skipParts() {
    for (bool more = true; more;) {
      zmq::message_t part;
      (void)router.recv(part, zmq::recv_flags::none);
      more = part.more();
    }
  }

  // One ack per (peer, stream): the highest committed sequence number.
  void sendAcks(std::vector<PeerStream>& acks) {
    std::sort(acks.begin(), acks.end());
    acks.erase(std::unique(acks.begin(), acks.end()), acks.end());
    for (const auto& [identity, key] : acks) {
      auto ack = event::encodeAck({key.second, ingestor.acked(key)});
      // A peer that went away has no pipe; ROUTER then drops the ack, fine.
      if (router.send(zmq::buffer(identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait))
        (void)router.send(zmq::buffer(ack), zmq::send_flags::dontwait);
    }
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  // A destructor must not throw; what could is said on stderr (the journal).
  try {
    (void)impl_->collect(true);  // the open batch is dropped unacknowledged; agents resend it
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accel-aggregatord: stopping the server: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "accel-aggregatord: stopping the server: an unknown exception\n");
  }
  impl_->stop = true;
  try {
    if (impl_->zap_thread.joinable()) impl_->zap_thread.join();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accel-aggregatord: joining the ZAP thread: %s\n", e.what());
  }
}

Result<std::unique_ptr<Server>> Server::start(const ServerOptions& o, Ingestor& ingestor,
                                              Metrics& metrics) {
  auto impl = std::make_unique<Impl>(o, ingestor, metrics);
  auto allow = loadAllowList(o.allow_dir, ::geteuid());
  if (!allow.ok()) return allow.error();
  impl->useAllowList(std::make_shared<const AllowList>(std::move(*allow)));
  try {
    impl->zap.set(zmq::sockopt::linger, 0);
    impl->zap.bind(kZapEndpoint);
    impl->query_zap.set(zmq::sockopt::linger, 0);
    impl->query_zap.bind(kZapEndpoint);
    auto& r = impl->router;
    r.set(zmq::sockopt::linger, 0);
    r.set(zmq::sockopt::curve_server, 1);
    r.set(zmq::sockopt::curve_secretkey, o.keys.secret_key);
    r.set(zmq::sockopt::zap_domain, "accel");
    // Above this zmq drops the connection itself; between max_frame_bytes
    // and this, frames arrive and are counted as oversized.
    r.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(o.max_frame_bytes * 4));
    r.set(zmq::sockopt::rcvhwm, 100000);
    r.set(zmq::sockopt::sndhwm, 100000);
    // zmq's listen backlog is 100: after a restart thousands of nodes connect
    // within seconds, and SYNs beyond the backlog wait for their retransmit
    // (1 s, 3 s, ...). The kernel caps it at net.core.somaxconn.
    r.set(zmq::sockopt::backlog, 4096);
    // libzmq's own default is 30 s: a stranger's half-made handshakes would
    // hold their descriptors that long.
    r.set(zmq::sockopt::handshake_ivl, static_cast<int>(o.handshake_timeout.count()));
    if (o.ping_interval.count() > 0) {
      r.set(zmq::sockopt::heartbeat_ivl, static_cast<int>(o.ping_interval.count()));
      r.set(zmq::sockopt::heartbeat_timeout, static_cast<int>(o.ping_timeout.count()));
    }
    event::setTcpKeepalive(r, o.tcp_keepalive);
    if (zmq_socket_monitor(r.handle(), kMonitorEndpoint,
                           ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_ACCEPT_FAILED) !=
        0)
      throw zmq::error_t();
    impl->monitor.set(zmq::sockopt::linger, 0);
    impl->monitor.connect(kMonitorEndpoint);
    r.bind(o.listen);
  } catch (const zmq::error_t& e) {
    return Error(ErrorCode::kUnavailable, "listen on " + o.listen + ": " + e.what());
  }
  if (!o.query_listen.empty()) {
    Impl* raw = impl.get();
    QueryOptions q{.listen = o.query_listen, .database = o.database, .hold_timeout = o.query_hold};
    q.still_allowed = [raw](const char* key, const char* node) {
      std::lock_guard lock(raw->allow_mu);
      return raw->zap_allow->admits(key, node);
    };
    auto queries = EventQueries::start(impl->query_ctx, q, o.keys);
    if (!queries.ok()) return queries.error();
    impl->queries = std::move(*queries);
  }
  Impl* raw = impl.get();
  impl->zap_thread = std::thread([raw] {
    try {
      raw->serveZap();
    } catch (const zmq::error_t&) {
      // The context is going away.
    }
  });
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Status Server::poll(std::chrono::milliseconds wait) {
  Impl& m = *impl_;
  m.waitForWork(wait);
  Status s = m.collect(false);
  m.receive();
  m.settle();
  m.submitIfDue();
  return s;
}

Result<size_t> Server::reloadAllowList() {
  auto allow = loadAllowList(impl_->options.allow_dir, ::geteuid());
  if (!allow.ok()) return allow.error();
  size_t n = allow->node_by_key.size();
  impl_->useAllowList(std::make_shared<const AllowList>(std::move(*allow)));
  return n;
}

std::string Server::endpoint() const { return impl_->router.get(zmq::sockopt::last_endpoint); }

std::vector<Rejection> Server::takeRejections(uint64_t* more) {
  if (more) *more = impl_->rejections_dropped;
  impl_->rejections_dropped = 0;
  return std::exchange(impl_->rejections, {});
}

}  // namespace accel::aggregator
