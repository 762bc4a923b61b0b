// hello_flood: a stranger's CURVE handshakes against accel-aggregatord. It
// knows the aggregator's public key (nodes are given it; it is no secret)
// but holds no key of the allow list:
//
//   hello_flood ENDPOINT SERVER_PUB_FILE SECONDS [SOCKETS] [SOURCE]
//
// ENDPOINT is tcp://HOST:PORT (a `*` host is taken as 127.0.0.1) or an
// ipc:// path (SOURCE then does not apply). SOCKETS
// (default 64) ZeroMQ DEALERs, each with a key pair of its own, connect to
// it; each is replaced by a new one with a new key as soon as its handshake
// is refused or its link drops (libzmq gives up after a refusal), or after a
// second without news.
// SOURCE (default 127.0.0.2) is the local address they connect from, so
// that the flood comes from an address of its own. It runs SECONDS, then
// prints `sockets=N handshakes_failed=N connected=N` from the sockets'
// monitors and exits 0; 2 on bad usage or a key it cannot read.
#include <sys/resource.h>
#include <zmq.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "accel/events/curve_keys.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Counts {
  uint64_t sockets = 0, failed = 0, connected = 0;
};

// One of the stranger's sockets, watched by a monitor: once its handshake
// fails or its link drops (libzmq does not try again after a refusal), or
// after a second without news, it is replaced by a new one with a new key.
class Slot {
 public:
  Slot(zmq::context_t& ctx, const std::string& endpoint, const std::string& server_key, int id)
      : ctx_(ctx), endpoint_(endpoint), server_key_(server_key), id_(id) {}
  ~Slot() { close(); }
  // Out of descriptors for a moment (the closed sockets are still being
  // reaped), the slot stays empty and the next step tries again.
  void open(Counts& c) {
    try {
      openSocket(c);
    } catch (const zmq::error_t&) {
      close();
    }
  }
  void openSocket(Counts& c) {
    auto keys = *accel::event::generateCurveKeyPair();
    socket_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::dealer);
    socket_->set(zmq::sockopt::linger, 0);
    socket_->set(zmq::sockopt::reconnect_ivl, 1);
    socket_->set(zmq::sockopt::curve_serverkey, server_key_);
    socket_->set(zmq::sockopt::curve_publickey, keys.public_key);
    socket_->set(zmq::sockopt::curve_secretkey, keys.secret_key);
    std::string mon = "inproc://flood-" + std::to_string(id_) + "-" + std::to_string(c.sockets);
    zmq_socket_monitor(socket_->handle(), mon.c_str(),
                       ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED |
                           ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                           ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
    monitor_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::pair);
    monitor_->set(zmq::sockopt::linger, 0);
    monitor_->connect(mon);
    socket_->connect(endpoint_);
    born_ = Clock::now();
    ++c.sockets;
  }
  // Reads the monitor; replaces the socket once it is done for.
  void step(Counts& c) {
    if (!monitor_) return open(c);
    bool done = Clock::now() - born_ > std::chrono::seconds(1);
    zmq::message_t ev, ep;
    while (monitor_->recv(ev, zmq::recv_flags::dontwait)) {
      if (ev.more()) (void)monitor_->recv(ep, zmq::recv_flags::none);
      uint16_t id = 0;
      if (ev.size() >= 2) std::memcpy(&id, ev.data(), sizeof id);
      if (id == ZMQ_EVENT_CONNECTED) {
        ++c.connected;
      } else {
        done = true;
        if (id != ZMQ_EVENT_DISCONNECTED) ++c.failed;
      }
    }
    if (!done) return;
    close();
    open(c);
  }

 private:
  void close() {
    if (socket_) zmq_socket_monitor(socket_->handle(), nullptr, 0);
    monitor_.reset();
    socket_.reset();
  }
  zmq::context_t& ctx_;
  std::string endpoint_, server_key_;
  int id_;
  std::unique_ptr<zmq::socket_t> socket_, monitor_;
  Clock::time_point born_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: hello_flood ENDPOINT SERVER_PUB_FILE SECONDS [SOCKETS] [SOURCE]\n");
    return 2;
  }
  std::string endpoint = argv[1];
  auto key = accel::event::loadPublicKey(argv[2]);
  if (!key.ok()) {
    std::fprintf(stderr, "hello_flood: %s\n", key.error().message().c_str());
    return 2;
  }
  double seconds = std::atof(argv[3]);
  int sockets = argc > 4 ? std::atoi(argv[4]) : 64;
  std::string source = argc > 5 ? argv[5] : "127.0.0.2";
  if ((endpoint.rfind("tcp://", 0) != 0 && endpoint.rfind("ipc://", 0) != 0) || sockets < 1) {
    std::fprintf(stderr, "hello_flood: ENDPOINT must be tcp:// or ipc://, SOCKETS at least 1\n");
    return 2;
  }
  std::string via = endpoint;
  if (endpoint.rfind("tcp://", 0) == 0) {
    std::string target = endpoint.substr(6);
    if (target.rfind("*:", 0) == 0) target = "127.0.0.1" + target.substr(1);
    via = "tcp://" + source + ":0;" + target;
  }
  rlimit fd{};
  getrlimit(RLIMIT_NOFILE, &fd);
  fd.rlim_cur = fd.rlim_max;
  setrlimit(RLIMIT_NOFILE, &fd);
  zmq::context_t ctx(2);
  Counts counts;
  std::vector<std::unique_ptr<Slot>> slots;
  for (int i = 0; i < sockets; ++i) {
    slots.push_back(std::make_unique<Slot>(ctx, via, *key, i));
    slots.back()->open(counts);
  }
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    for (auto& s : slots) s->step(counts);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::printf("sockets=%llu handshakes_failed=%llu connected=%llu\n",
              (unsigned long long)counts.sockets, (unsigned long long)counts.failed,
              (unsigned long long)counts.connected);
  return 0;
}
