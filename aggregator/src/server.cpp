#include "accel/aggregator/server.h"

#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
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

}  // namespace

struct Server::Impl {
  using Clock = std::chrono::steady_clock;
  ServerOptions options;
  Ingestor& ingestor;
  Metrics& metrics;
  zmq::context_t ctx{1};
  zmq::socket_t zap{ctx, zmq::socket_type::rep};
  zmq::socket_t router{ctx, zmq::socket_type::router};
  zmq::socket_t monitor{ctx, zmq::socket_type::pair};
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

  // ZAP (RFC 27): answers each CURVE handshake with 200 and the node name
  // as User-Id, or 400 for a key that is not on the list.
  void serveZap() {
    while (!stop) {
      zmq::pollitem_t item{zap.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(100));
      if (!(item.revents & ZMQ_POLLIN)) continue;
      std::vector<zmq::message_t> req;
      do {
        req.emplace_back();
        (void)zap.recv(req.back(), zmq::recv_flags::none);
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
      if (status != "200") metrics.reject(Reject::kUnknownKey);
      std::string id = req.size() > 1 ? req[1].to_string() : std::string();
      zap.send(zmq::buffer(std::string("1.0")), zmq::send_flags::sndmore);
      zap.send(zmq::buffer(id), zmq::send_flags::sndmore);
      zap.send(zmq::buffer(status), zmq::send_flags::sndmore);
      zap.send(zmq::buffer(text), zmq::send_flags::sndmore);
      zap.send(zmq::buffer(user), zmq::send_flags::sndmore);
      zap.send(zmq::buffer(metadata), zmq::send_flags::none);
    }
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
    zmq::pollitem_t items[3] = {{nullptr, writer.readyFd(), ZMQ_POLLIN, 0},
                                {monitor.handle(), 0, ZMQ_POLLIN, 0},
                                {router.handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, full ? 2 : 3, wait);
  }

  // Counts the connections the monitor reports opened and closed. Each
  // report is two frames: event number (2 bytes) and value (4 bytes), then
  // the endpoint.
  void countConnections() {
    while (true) {
      zmq::message_t event, endpoint;
      if (!monitor.recv(event, zmq::recv_flags::dontwait)) return;
      if (event.more()) (void)monitor.recv(endpoint, zmq::recv_flags::none);
      if (event.size() < 2) continue;
      uint16_t id;
      std::memcpy(&id, event.data(), sizeof id);
      if (id == ZMQ_EVENT_ACCEPTED)
        ++metrics.connections;
      else if (id == ZMQ_EVENT_DISCONNECTED)
        --metrics.connections;
    }
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
    if (o.ping_interval.count() > 0) {
      r.set(zmq::sockopt::heartbeat_ivl, static_cast<int>(o.ping_interval.count()));
      r.set(zmq::sockopt::heartbeat_timeout, static_cast<int>(o.ping_timeout.count()));
    }
    event::setTcpKeepalive(r, o.tcp_keepalive);
    if (zmq_socket_monitor(r.handle(), kMonitorEndpoint,
                           ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED) != 0)
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
    auto queries = EventQueries::start(impl->ctx, q, o.keys);
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
  m.countConnections();
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

std::vector<Rejection> Server::takeRejections(uint64_t* more) {
  if (more) *more = impl_->rejections_dropped;
  impl_->rejections_dropped = 0;
  return std::exchange(impl_->rejections, {});
}

}  // namespace accel::aggregator
