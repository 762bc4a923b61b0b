#include "accel/aggregator/server.h"

#include <dirent.h>
#include <time.h>
#include <zmq.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <zmq.hpp>

namespace accel::aggregator {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";

int64_t nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Z85 public key -> node name, from DIR/NODE.pub. Unreadable or malformed
// files are skipped: such a node simply is not admitted.
std::map<std::string, std::string> readAllowList(const std::string& dir) {
  std::map<std::string, std::string> keys;
  DIR* d = opendir(dir.c_str());
  if (!d) return keys;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= 4 || name.substr(name.size() - 4) != ".pub") continue;
    auto key = event::loadPublicKey(dir + "/" + name);
    if (key.ok()) keys[*key] = name.substr(0, name.size() - 4);
  }
  closedir(d);
  return keys;
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  Ingestor& ingestor;
  Metrics& metrics;
  zmq::context_t ctx{1};
  zmq::socket_t zap{ctx, zmq::socket_type::rep};
  zmq::socket_t router{ctx, zmq::socket_type::router};
  std::atomic<bool> stop{false};
  std::thread zap_thread;

  Impl(const ServerOptions& o, Ingestor& i, Metrics& m) : options(o), ingestor(i), metrics(m) {}

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
      std::string status = "400", text = "unknown key", user;
      if (req.size() >= 7 && req[5].to_string() == "CURVE" && req[6].size() == 32) {
        char z85[41] = {};
        zmq_z85_encode(z85, static_cast<const uint8_t*>(req[6].data()), 32);
        auto allow = readAllowList(options.allow_dir);
        auto it = allow.find(z85);
        if (it != allow.end()) status = "200", text = "OK", user = it->second;
      }
      if (status != "200") metrics.reject(Reject::kUnknownKey);
      std::string id = req.size() > 1 ? req[1].to_string() : std::string();
      zap.send(zmq::buffer(std::string("1.0")), zmq::send_flags::sndmore);
      zap.send(zmq::buffer(id), zmq::send_flags::sndmore);
      zap.send(zmq::buffer(status), zmq::send_flags::sndmore);
      zap.send(zmq::buffer(text), zmq::send_flags::sndmore);
      zap.send(zmq::buffer(user), zmq::send_flags::sndmore);
      zap.send(zmq::message_t(), zmq::send_flags::none);
    }
  }

  void sendAck(const zmq::message_t& identity, const StreamKey& key) {
    auto ack = event::encodeAck({key.second, ingestor.acked(key)});
    zmq::message_t id(identity.data(), identity.size());
    // A peer that went away has no pipe; ROUTER then drops the ack, fine.
    if (router.send(id, zmq::send_flags::sndmore | zmq::send_flags::dontwait))
      (void)router.send(zmq::buffer(ack), zmq::send_flags::dontwait);
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  impl_->stop = true;
  if (impl_->zap_thread.joinable()) impl_->zap_thread.join();
}

Result<std::unique_ptr<Server>> Server::start(const ServerOptions& o, Ingestor& ingestor, Metrics& metrics) {
  auto impl = std::make_unique<Impl>(o, ingestor, metrics);
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
    r.bind(o.listen);
  } catch (const zmq::error_t& e) {
    return Error(ErrorCode::kUnavailable, "listen on " + o.listen + ": " + e.what());
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
  zmq::pollitem_t item{m.router.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, wait);
  if (!(item.revents & ZMQ_POLLIN)) return okStatus();
  std::vector<std::pair<zmq::message_t, StreamKey>> acks;
  int64_t now = nowNs();
  for (size_t n = 0; n < m.options.batch_max; ++n) {
    zmq::message_t identity, payload;
    if (!m.router.recv(identity, zmq::recv_flags::dontwait)) break;
    if (!identity.more()) continue;  // ROUTER always sends identity + parts; defensive
    (void)m.router.recv(payload, zmq::recv_flags::none);
    // An envelope is exactly one part; drain and refuse anything longer.
    bool extra_parts = false;
    for (bool more = payload.more(); more; extra_parts = true) {
      zmq::message_t part;
      (void)m.router.recv(part, zmq::recv_flags::none);
      more = part.more();
    }
    if (extra_parts) {
      m.metrics.reject(Reject::kFrames);
      continue;
    }
    const char* user = zmq_msg_gets(payload.handle(), "User-Id");
    auto key = m.ingestor.offer(user ? user : "", {static_cast<const uint8_t*>(payload.data()), payload.size()}, now);
    if (key) acks.emplace_back(std::move(identity), *key);
  }
  ACCEL_TRY(m.ingestor.commit(nowNs()));
  // One ack per (peer, stream): the highest committed sequence number.
  std::set<std::pair<std::string, StreamKey>> sent;
  for (auto& [identity, key] : acks)
    if (sent.emplace(identity.to_string(), key).second) m.sendAck(identity, key);
  return okStatus();
}

}  // namespace accel::aggregator
