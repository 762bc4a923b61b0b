// The metrics endpoint under slow clients (slowloris): the deadline on each
// connection, the limit per source address, and a scraper that still gets
// its answer. A real libmicrohttpd server on a loopback port; loopback
// addresses other than 127.0.0.1 stand for other hosts where a test says so.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "accel/common/metrics_http.h"

namespace accel::metrics {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A TCP connection to 127.0.0.1:port from `source`; closes itself.
class Client {
 public:
  Client(const char* source, uint16_t port) : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval t{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
    connected_ = bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) == 0 &&
                 connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  }
  ~Client() { close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }
  bool send(const std::string& text) {
    return ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL) == ssize_t(text.size());
  }
  // Whether the server ended the connection (end of stream or reset) within
  // `wait`. A slow client never gets data before that.
  bool endedWithin(std::chrono::milliseconds wait) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, int(wait.count())) <= 0) return false;
    char c;
    return recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
  }
  // Everything the server sends until it closes (or 5 s of silence).
  std::string readAll() {
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = recv(fd_, buf, sizeof buf, 0)) > 0;) out.append(buf, size_t(n));
    return out;
  }

 private:
  int fd_;
  bool connected_ = false;
};

// n connections from `source` that start a request and never finish it.
std::vector<std::unique_ptr<Client>> holdSlowly(const char* source, uint16_t port, int n) {
  std::vector<std::unique_ptr<Client>> held;
  for (int i = 0; i < n; ++i) {
    held.push_back(std::make_unique<Client>(source, port));
    EXPECT_TRUE(held.back()->connected()) << source << " #" << i;
    held.back()->send("GET /metrics HTTP/1.1\r\nHost: x\r\n");
  }
  return held;
}

// How many of `held` the server has ended, once that number has stopped
// growing for a while.
int endedOf(std::vector<std::unique_ptr<Client>>& held) {
  int ended = -1, last = -2;
  while (ended != last) {
    last = ended;
    std::this_thread::sleep_for(200ms);
    ended = 0;
    for (auto& c : held) ended += c->endedWithin(10ms) ? 1 : 0;
  }
  return ended;
}

// The status line of a GET /metrics from `source`; empty when refused.
std::string scrape(const char* source, uint16_t port) {
  Client c(source, port);
  if (!c.connected() || !c.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")) return "";
  std::string answer = c.readAll();
  return answer.substr(0, answer.find("\r\n"));
}

std::unique_ptr<HttpEndpoint> serve(HttpLimits limits) {
  auto e = HttpEndpoint::start(
      "127.0.0.1:0", [](Format) { return std::string("accel_up 1\n"); }, limits);
  EXPECT_TRUE(e.ok()) << e.error().message();
  return e.ok() ? std::move(*e) : nullptr;
}

constexpr char kOk[] = "HTTP/1.1 200 OK";

TEST(MetricsHttpGuardTest, ASlowClientIsCutAtTheDeadline) {
  auto e = serve({.connections = 64, .per_source = 8, .deadline = 300ms});
  ASSERT_TRUE(e);
  Client slow("127.0.0.1", e->port());
  ASSERT_TRUE(slow.connected());
  ASSERT_TRUE(slow.send("GET /metrics HTTP/1.1\r\nX-Slow: "));
  // A byte every 50 ms keeps the inactivity timeout (10 s) from ever firing.
  bool ended = false;
  for (auto end = Clock::now() + 6s; !ended && Clock::now() < end;) {
    slow.send("a");
    ended = slow.endedWithin(50ms);
  }
  EXPECT_TRUE(ended) << "a client trickling its headers was still connected after 6 s";
  EXPECT_EQ(scrape("127.0.0.1", e->port()), kOk);
}

TEST(MetricsHttpGuardTest, OneSourceHoldsAtMostItsShareAndKeepsItsNewest) {
  auto e = serve({.connections = 64, .per_source = 4, .deadline = 60s});
  ASSERT_TRUE(e);
  auto held = holdSlowly("127.0.0.2", e->port(), 12);
  EXPECT_EQ(endedOf(held), 8);
  for (size_t i = held.size() - 4; i < held.size(); ++i)
    EXPECT_FALSE(held[i]->endedWithin(0ms)) << "connection #" << i << ", among the newest four";
}

TEST(MetricsHttpGuardTest, SlowClientsOfOneHostCannotStopAScrapeFromAnother) {
  // 127.0.0.2 and 127.0.0.1 stand for two hosts here.
  auto e = serve({.connections = 64, .per_source = 8, .deadline = 60s, .local_by_owner = false});
  ASSERT_TRUE(e);
  auto held = holdSlowly("127.0.0.2", e->port(), 40);
  EXPECT_EQ(scrape("127.0.0.1", e->port()), kOk);
  EXPECT_EQ(endedOf(held), 32);
}

TEST(MetricsHttpGuardTest, SlowClientsOnTheScrapersOwnHostCannotKeepItOut) {
  // On the node, a connection counts for the user that owns its socket,
  // whichever of the node's addresses it comes from: here the slow clients
  // and the scraper are the same user, on 127.0.0.3, .4 and .1. They share
  // one source's places, and each newcomer shuts the oldest of them.
  auto e = serve({.connections = 64, .per_source = 8, .deadline = 60s});
  ASSERT_TRUE(e);
  auto held = holdSlowly("127.0.0.3", e->port(), 40);
  auto more = holdSlowly("127.0.0.4", e->port(), 40);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(scrape("127.0.0.1", e->port()), kOk) << "scrape " << i;
  const int open = 80 - endedOf(held) - endedOf(more);
  EXPECT_LE(open, 8) << "the node's own addresses held more than their share";
}

TEST(MetricsHttpGuardTest, OnTheNodeEachUserIsASourceOfItsOwn) {
  // Root's connections (a Prometheus beside the agent) and those of another
  // user come from loopback alike; the user's newcomers shut only the user's
  // own oldest connections, never root's.
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to open connections as another user";
  auto e = serve({.connections = 64, .per_source = 8, .deadline = 60s});
  ASSERT_TRUE(e);
  auto roots = holdSlowly("127.0.0.5", e->port(), 4);
  // The user: 40 slow connections. A socket belongs to the fsuid of the
  // thread that makes it, and setfsuid is the calling thread's alone (no
  // fork of this threaded process, whose child could block on a lock another
  // thread held at the fork).
  std::vector<std::unique_ptr<Client>> users;
  bool became = false;
  std::thread([&] {
    if (syscall(SYS_setfsuid, 65534) < 0 || syscall(SYS_setfsuid, -1) != 65534) return;
    became = true;
    users = holdSlowly("127.0.0.3", e->port(), 40);
    (void)syscall(SYS_setfsuid, 0);
  }).join();
  ASSERT_TRUE(became) << "could not make sockets as another user";
  std::this_thread::sleep_for(500ms);  // the endpoint takes the last of them
  EXPECT_EQ(endedOf(roots), 0) << "another user's connections shut root's";
  EXPECT_EQ(endedOf(users), 32) << "the user's newcomers shut the user's own oldest, beyond 8";
  EXPECT_EQ(scrape("127.0.0.1", e->port()), kOk);
}

TEST(MetricsHttpGuardTest, ManySourcesCannotFillTheEndpoint) {
  auto e = serve({.connections = 16, .per_source = 4, .deadline = 60s, .local_by_owner = false});
  ASSERT_TRUE(e);
  std::vector<std::vector<std::unique_ptr<Client>>> hosts;
  for (int h = 0; h < 8; ++h)
    hosts.push_back(holdSlowly(("127.0.1." + std::to_string(h + 1)).c_str(), e->port(), 4));
  EXPECT_EQ(scrape("127.0.0.1", e->port()), kOk);
  int open = 0;
  for (auto& held : hosts) open += int(held.size()) - endedOf(held);
  EXPECT_LE(open, 16);
}

TEST(MetricsHttpGuardTest, LimitsThatCannotWorkAreRefused) {
  auto render = [](Format) { return std::string(); };
  for (HttpLimits bad :
       {HttpLimits{.connections = 0}, HttpLimits{.per_source = 0},
        HttpLimits{.connections = 4, .per_source = 8}, HttpLimits{.deadline = 0ms}}) {
    auto e = HttpEndpoint::start("127.0.0.1:0", render, bad);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message().find("metrics: "), std::string::npos) << e.error().message();
  }
}

}  // namespace
}  // namespace accel::metrics
