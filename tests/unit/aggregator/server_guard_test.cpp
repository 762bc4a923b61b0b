// The node socket before authentication, over real TCP on loopback: a
// handshake that is never finished is dropped after HandshakeTimeout; one
// source address holds at most ConnectionsPerAddress connections; an address
// whose keys ZAP keeps refusing is barred, so that it stops costing
// handshakes while nodes elsewhere go on; a failed accept (EMFILE) is
// counted while the links already open keep working. And a metrics render
// formats without holding the lock that ingest takes.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "accel/aggregator/config.h"
#include "server_fixture.h"

namespace accel::aggregator {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A plain TCP connection from `source` (a loopback address) to `port` on
// 127.0.0.1, non-blocking; -1 if it could not be made.
int rawConnect(uint16_t port, const char* source = "127.0.0.1") {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from{}, to{};
  from.sin_family = to.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  to.sin_port = htons(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// True once the server has closed `fd` (end of stream or reset); reads and
// drops whatever it sent before (its ZMTP greeting).
bool closedByPeer(int fd) {
  char buf[256];
  while (true) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) continue;
    if (n == 0) return true;
    return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINPROGRESS && errno != ENOTCONN;
  }
}

class ServerGuardTest : public test::ServerFixture {
 protected:
  void TearDown() override {
    for (int fd : raw_) ::close(fd);
    dealers_.clear();
    ServerFixture::TearDown();
  }
  void start(std::chrono::milliseconds handshake, size_t per_address) {
    ServerOptions o{"tcp://127.0.0.1:*", server_keys_, dir_ + "/nodes", 64 * 1024, 1000, 1ms};
    o.handshake_timeout = handshake;
    o.per_address = per_address;
    auto s = Server::start(o, *ingestor_, metrics_);
    ASSERT_TRUE(s.ok()) << s.error().message();
    server_ = std::move(*s);
    std::string ep = server_->endpoint();
    port_ = uint16_t(std::stoi(ep.substr(ep.rfind(':') + 1)));
  }
  int raw(const char* source = "127.0.0.1") {
    int fd = rawConnect(port_, source);
    EXPECT_GE(fd, 0) << "connect from " << source;
    raw_.push_back(fd);
    return fd;
  }
  // A CURVE dealer from `source` with `keys`; reconnects every 10 ms.
  zmq::socket_t& node(const event::CurveKeyPair& keys, const char* source) {
    auto d = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::dealer);
    d->set(zmq::sockopt::linger, 0);
    d->set(zmq::sockopt::reconnect_ivl, 10);
    d->set(zmq::sockopt::curve_serverkey, server_keys_.public_key);
    d->set(zmq::sockopt::curve_publickey, keys.public_key);
    d->set(zmq::sockopt::curve_secretkey, keys.secret_key);
    d->connect(std::string("tcp://") + source + ":0;127.0.0.1:" + std::to_string(port_));
    dealers_.push_back(std::move(d));
    return *dealers_.back();
  }
  void pollFor(std::chrono::milliseconds how_long) {
    for (auto end = Clock::now() + how_long; Clock::now() < end;)
      ASSERT_TRUE(server_->poll(10ms).ok());
  }
  // Sends n1's event `seq` on `d` and polls until it is acknowledged (5 s at most).
  bool delivered(zmq::socket_t& d, uint64_t seq) {
    d.send(zmq::buffer(event::encode({"n1", 1, seq, 1, 1}, event::TaskStarted{3, 0, 1, 1})));
    for (auto end = Clock::now() + 5s; Clock::now() < end;) {
      EXPECT_TRUE(server_->poll(10ms).ok());
      zmq::message_t m;
      while (d.recv(m, zmq::recv_flags::dontwait)) {
        auto ack = event::decodeAck({static_cast<const uint8_t*>(m.data()), m.size()});
        if (ack.ok() && ack->seq >= seq) return true;
      }
    }
    return false;
  }
  uint64_t cut() { return metrics_.rejected[size_t(Reject::kAddressLimit)]; }

  uint16_t port_ = 0;
  std::vector<int> raw_;
  std::vector<std::unique_ptr<zmq::socket_t>> dealers_;
};

// A peer that connects and never sends its handshake loses its connection
// once HandshakeTimeout is over (libzmq's own default would keep it 30 s).
TEST_F(ServerGuardTest, UnfinishedHandshakeIsDroppedAfterTheTimeout) {
  start(300ms, 16);
  int fd = raw();
  auto opened = Clock::now();
  bool closed = false;
  while (!closed && Clock::now() < opened + 5s) {
    ASSERT_TRUE(server_->poll(10ms).ok());
    closed = closedByPeer(fd);
  }
  EXPECT_TRUE(closed) << "a silent connection was still open after 5 s";
  EXPECT_GE(Clock::now() - opened, 250ms) << "closed before the handshake timeout";
  EXPECT_EQ(cut(), 0u) << "closed by the address bound, not by the timeout";
}

// Over the bound, a source's further connections are cut as soon as they are
// accepted; those within it stay open, and another address is not affected.
TEST_F(ServerGuardTest, ConnectionsPerAddressAreBounded) {
  start(10s, 2);
  std::vector<int> fds;
  for (int i = 0; i < 4; ++i) fds.push_back(raw());
  for (auto end = Clock::now() + 5s; cut() < 2 && Clock::now() < end;)
    ASSERT_TRUE(server_->poll(10ms).ok());
  pollFor(100ms);
  int closed = 0;
  for (int fd : fds) closed += closedByPeer(fd) ? 1 : 0;
  EXPECT_EQ(closed, 2);
  EXPECT_EQ(cut(), 2u);
  EXPECT_NE(metrics_.render().find("accel_aggregator_rejected_total{reason=\"address_limit\"} 2"),
            std::string::npos)
      << metrics_.render();
  EXPECT_TRUE(delivered(node(node_keys_, "127.0.0.2"), 1)) << "a node at another address";
}

// A stranger's keys, refused by ZAP, on new connections all the time: after a few
// refusals its address is barred and its connections are cut on accept, so
// the handshakes it gets to the end stay few; a node at another address is
// served throughout.
TEST_F(ServerGuardTest, AnAddressWhoseKeysAreRefusedIsBarred) {
  start(3s, 16);
  // libzmq does not reconnect after a refusal: the stranger makes new
  // sockets, with new keys, every 20 ms.
  uint64_t attempts = 0;
  for (auto end = Clock::now() + 1500ms; Clock::now() < end; attempts += 4) {
    dealers_.clear();
    for (int i = 0; i < 4; ++i) node(*event::generateCurveKeyPair(), "127.0.0.3");
    pollFor(20ms);
  }
  uint64_t refused = metrics_.rejected[size_t(Reject::kUnknownKey)];
  EXPECT_GT(cut(), 0u) << "the stranger's connections were never cut";
  // Three refusals (or too many connections in a second) bar the address;
  // the handshakes already under way then may still reach ZAP, but most of
  // the stranger's connections are cut before they cost one.
  EXPECT_LT(refused * 4, attempts)
      << "ZAP refused " << refused << " of the stranger's " << attempts << " connections";
  EXPECT_TRUE(delivered(node(node_keys_, "127.0.0.1"), 1)) << "a node at another address";
}

// Descriptors run out: accept() fails with EMFILE, which is counted, and the
// link already open still carries events and their acknowledgements.
TEST_F(ServerGuardTest, AcceptFailuresAreCountedAndOpenLinksKeepWorking) {
  start(3s, 16);
  auto& link = node(node_keys_, "127.0.0.1");
  ASSERT_TRUE(delivered(link, 1));
  // The client's socket exists before the table is filled: connect() then
  // needs no descriptor, the server's accept() does.
  int late = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ASSERT_GE(late, 0);
  raw_.push_back(late);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  int highest = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(highest, 0);
  rlimit low = saved;
  low.rlim_cur = rlim_t(highest) + 64;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> filler{highest};
  for (int fd; (fd = ::dup(highest)) >= 0;) filler.push_back(fd);
  ASSERT_EQ(errno, EMFILE);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port_);
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  (void)::connect(late, reinterpret_cast<sockaddr*>(&to), sizeof to);
  auto emfile = [&] { return metrics_.accept_failures[size_t(AcceptFailure::kEmfile)].load(); };
  for (auto end = Clock::now() + 5s; emfile() == 0 && Clock::now() < end;)
    ASSERT_TRUE(server_->poll(10ms).ok());
  bool still = delivered(link, 2);
  for (int fd : filler) ::close(fd);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_GT(emfile(), 0u) << "the failed accept was not counted";
  EXPECT_TRUE(still) << "the open link stopped while accepts failed";
  EXPECT_NE(metrics_.render().find("accel_aggregator_accept_failures_total{reason=\"emfile\"}"),
            std::string::npos);
}

// A render copies the per-node state under the lock and formats it after:
// while it formats, ingest's setLag and noteNode go through at once.
TEST(MetricsRender, FormatsWithoutHoldingTheLock) {
  Metrics m;
  for (int i = 0; i < 1000; ++i) m.setLag("node" + std::to_string(i), 0.5);
  bool ingest_went_through = false;
  std::promise<void> done;
  std::thread ingest;  // joined after the render, so that a render that holds the lock ends
  m.before_format = [&] {
    ingest = std::thread([&] {
      m.setLag("node-late", 1.0);
      m.noteNode("node-late", {});
      done.set_value();
    });
    ingest_went_through = done.get_future().wait_for(2s) == std::future_status::ready;
  };
  std::string text = m.render(0);
  ingest.join();
  EXPECT_TRUE(ingest_went_through) << "ingest waited for the render";
  EXPECT_NE(text.find("accel_aggregator_node_lag_seconds{node=\"node999\"} 0.5"),
            std::string::npos);
}

// The keys of accel-aggregator.conf that set these bounds: their defaults
// and their values.
TEST(AggregatorConfig, BoundsBeforeAuthentication) {
  auto d = parseAggregatorConfig("");
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->handshake_timeout, 3s);
  EXPECT_EQ(d->io_threads, 2u);
  EXPECT_EQ(d->connections_per_address, 16u);
  auto c = parseAggregatorConfig("HandshakeTimeout=5\nIoThreads=4\nConnectionsPerAddress=0\n");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->handshake_timeout, 5s);
  EXPECT_EQ(c->io_threads, 4u);
  EXPECT_EQ(c->connections_per_address, 0u);
  EXPECT_FALSE(parseAggregatorConfig("HandshakeTimeout=0\n").ok());
  EXPECT_FALSE(parseAggregatorConfig("IoThreads=0\n").ok());
}

}  // namespace
}  // namespace accel::aggregator
