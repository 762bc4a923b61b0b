#include "accel/common/metrics_http.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace accel::metrics {
namespace {

// Inactivity timeout, a backstop behind the guard's deadline.
constexpr unsigned kTimeoutSeconds = 10;

std::string parse(const std::string& address, sockaddr_in* sa) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size())
    return "'" + address + "' is not HOST:PORT (a numeric IPv4 host, e.g. 127.0.0.1:9464)";
  const std::string port_text = address.substr(colon + 1);
  char* end = nullptr;
  unsigned long port = std::strtoul(port_text.c_str(), &end, 10);
  if (*end != '\0' || port > 65535 ||
      port_text.find_first_not_of("0123456789") != std::string::npos)
    return "'" + port_text + "' in '" + address + "' is not a port (0 to 65535)";
  *sa = sockaddr_in{};
  sa->sin_family = AF_INET;
  sa->sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa->sin_addr) != 1)
    return "'" + address.substr(0, colon) + "' in '" + address + "' is not a numeric IPv4 address";
  return "";
}

MHD_Result reply(MHD_Connection* c, unsigned status, const std::string& body, const char* type) {
  MHD_Response* r = MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()),
                                                    MHD_RESPMEM_MUST_COPY);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  // One request per connection: the deadline counts from accept, and an idle
  // keep-alive connection would only hold a place.
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
  MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

MHD_Result answer(void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
                  const char*, size_t* upload_size, void**) {
  auto* self = static_cast<const HttpEndpoint*>(cls);
  if (std::strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
      std::strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
    if (upload_size) *upload_size = 0;  // a body is not read
    return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n", "text/plain");
  }
  if (std::strcmp(url, "/metrics") != 0 && std::strcmp(url, "/") != 0)
    return reply(c, MHD_HTTP_NOT_FOUND, "metrics are at /metrics\n", "text/plain");
  const char* accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
  Format format = formatFor(accept ? accept : "");
  return reply(c, MHD_HTTP_OK, self->render()(format), contentType(format));
}

// The peer's IPv4 address in host order; 0 for anything else, which an IPv4
// listener does not get.
uint32_t sourceOf(const sockaddr* addr, socklen_t len) {
  if (!addr || addr->sa_family != AF_INET || len < socklen_t(sizeof(sockaddr_in))) return 0;
  return ntohl(reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr);
}

// The owner of the socket at the other end of `fd`, a TCP connection made on
// this host: the kernel's socket diagnostics are asked for the peer's socket
// by its four addresses. nullopt when it cannot be told (the peer closed
// already, or no answer).
std::optional<uint32_t> localPeerUid(int fd) {
  sockaddr_in self{}, peer{};
  socklen_t self_len = sizeof self, peer_len = sizeof peer;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&self), &self_len) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 ||
      self.sin_family != AF_INET || peer.sin_family != AF_INET)
    return std::nullopt;
  struct {
    nlmsghdr header;
    inet_diag_req_v2 body;
  } ask{};
  ask.header.nlmsg_len = sizeof ask;
  ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  ask.header.nlmsg_flags = NLM_F_REQUEST;
  ask.body.sdiag_family = AF_INET;
  ask.body.sdiag_protocol = IPPROTO_TCP;
  ask.body.idiag_states = ~0u;
  // The peer's socket: its source is our peer, its destination us.
  ask.body.id.idiag_sport = peer.sin_port;
  ask.body.id.idiag_dport = self.sin_port;
  ask.body.id.idiag_src[0] = peer.sin_addr.s_addr;
  ask.body.id.idiag_dst[0] = self.sin_addr.s_addr;
  ask.body.id.idiag_cookie[0] = ask.body.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl < 0) return std::nullopt;
  std::optional<uint32_t> uid;
  alignas(nlmsghdr) char buf[1024];
  timeval wait{0, 100000};  // the kernel answers at once; never hang the endpoint
  setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(nl, &ask, sizeof ask, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) ==
      ssize_t(sizeof ask)) {
    ssize_t n = recv(nl, buf, sizeof buf, 0);
    auto* h = reinterpret_cast<const nlmsghdr*>(buf);
    if (n >= ssize_t(NLMSG_LENGTH(sizeof(inet_diag_msg))) && NLMSG_OK(h, size_t(n)) &&
        h->nlmsg_type == SOCK_DIAG_BY_FAMILY)
      uid = static_cast<const inet_diag_msg*>(NLMSG_DATA(h))->idiag_uid;
  }
  close(nl);
  return uid;
}

std::string checkLimits(const HttpLimits& l) {
  if (l.connections == 0 || l.per_source == 0 || l.deadline.count() <= 0)
    return "connection limits and the deadline must be above zero";
  if (l.per_source > l.connections) return "per_source must not be above connections";
  return "";
}

}  // namespace

// ---------------------------------------------------------------------------
// The guard: which connections are open, from where and since when.
//
// libmicrohttpd calls opened() once it has accepted a connection and closed()
// before it closes the socket, both on its own thread. The
// watchdog thread shuts sockets past their deadline. Both hold mu_, and a
// socket is shut only while its entry is in open_: closed() removes the
// entry before libmicrohttpd closes the descriptor, so a shut never reaches
// a descriptor number the process has reused.
class HttpEndpoint::Guard {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Guard(HttpLimits limits) : limits_(limits), local_(localAddresses()) {}
  ~Guard() { stop(); }

  void startWatchdog() {
    watchdog_ = std::thread([this] { watch(); });
  }

  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
  }

  // A newcomer from `address` is always let in; room is made by shutting the
  // oldest connection of its source, or of all, when that is full. Returns
  // the connection's key, for closed().
  uint64_t opened(int fd, uint32_t address) {
    std::unique_lock lock(mu_);
    const bool local = isLocal(address);
    lock.unlock();
    // A connection from this host is its owner's: the user of a job and a
    // Prometheus beside it are two sources, whatever addresses they pick.
    uint64_t source = address;
    if (local) source = kLocal | localPeerUid(fd).value_or(kUnknownUid);
    lock.lock();
    unsigned from_source = 0, live = 0;
    for (const auto& [seq, c] : open_)
      if (!c.shut) {
        ++live;
        if (c.source == source) ++from_source;
      }
    if (from_source >= limits_.per_source)
      shutOldest([source](const Conn& c) { return c.source == source; });
    else if (live >= limits_.connections)
      shutOldest([](const Conn&) { return true; });
    uint64_t seq = ++next_;
    open_.emplace(seq, Conn{fd, source, Clock::now(), false});
    return seq;
  }

  void closed(uint64_t seq) {
    std::lock_guard lock(mu_);
    open_.erase(seq);
  }

 private:
  struct Conn {
    int fd;
    uint64_t source;  // a peer's address (host order), or kLocal | its owner's uid
    Clock::time_point since;
    bool shut;
  };
  static constexpr uint64_t kLocal = uint64_t(1) << 32;
  static constexpr uint32_t kUnknownUid = ~0u;  // the peer closed before it was asked
  static constexpr auto kLocalRefresh = std::chrono::seconds(10);

  // The node's own IPv4 addresses (host order); all of 127/8 counts as local too.
  static std::set<uint32_t> localAddresses() {
    std::set<uint32_t> out;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return out;
    for (ifaddrs* i = list; i; i = i->ifa_next)
      if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
        out.insert(ntohl(reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr));
    freeifaddrs(list);
    return out;
  }

  bool isLocal(uint32_t address) const {
    return limits_.local_by_owner && ((address >> 24) == 127 || local_.count(address));
  }

  // open_ is ordered by seq, that is by age: the first match is the oldest.
  template <typename Match>
  void shutOldest(Match match) {
    for (auto& [seq, c] : open_)
      if (!c.shut && match(c)) {
        shut(c);
        return;
      }
  }

  // libmicrohttpd sees the end of stream and closes the connection.
  static void shut(Conn& c) {
    ::shutdown(c.fd, SHUT_RDWR);
    c.shut = true;
  }

  void watch() {
    const auto tick = std::clamp<Clock::duration>(
        limits_.deadline / 8, std::chrono::milliseconds(10), std::chrono::milliseconds(250));
    auto refreshed = Clock::now();
    std::unique_lock lock(mu_);
    while (!wake_.wait_for(lock, tick, [this] { return stopping_; })) {
      const auto now = Clock::now();
      for (auto& [seq, c] : open_)
        if (!c.shut && now - c.since >= limits_.deadline) shut(c);
      if (now - refreshed >= kLocalRefresh) {
        lock.unlock();
        auto fresh = localAddresses();
        lock.lock();
        local_ = std::move(fresh);
        refreshed = now;
      }
    }
  }

  const HttpLimits limits_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<uint64_t, Conn> open_;
  uint64_t next_ = 0;
  std::set<uint32_t> local_;
  std::thread watchdog_;
};

// libmicrohttpd's callbacks, on its thread.
namespace {

void noteConnection(void* cls, MHD_Connection* c, void** context,
                    MHD_ConnectionNotificationCode code) {
  auto* guard = static_cast<HttpEndpoint::Guard*>(cls);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const MHD_ConnectionInfo* fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const MHD_ConnectionInfo* peer = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!fd) return;  // not followed; the inactivity timeout still ends it
    const sockaddr* addr = peer ? peer->client_addr : nullptr;
    uint64_t seq = guard->opened(fd->connect_fd, sourceOf(addr, sizeof(sockaddr_in)));
    // The connection's sequence number rides in MHD's per-connection pointer, which is never
    // dereferenced: no allocation to leak when a connection ends without a request.
    // NOLINTNEXTLINE(performance-no-int-to-ptr): never used as a pointer
    *context = reinterpret_cast<void*>(static_cast<uintptr_t>(seq));
  } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *context) {
    guard->closed(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(*context)));
    *context = nullptr;
  }
}

}  // namespace

std::string checkAddress(const std::string& address) {
  sockaddr_in sa{};
  return parse(address, &sa);
}

HttpEndpoint::HttpEndpoint(Render render) : render_(std::move(render)) {}

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::start(const std::string& address, Render render,
                                                          HttpLimits limits) {
  sockaddr_in sa{};
  if (auto why = parse(address, &sa); !why.empty())
    return Error(ErrorCode::kInvalidArgument, "metrics: " + why);
  if (auto why = checkLimits(limits); !why.empty())
    return Error(ErrorCode::kInvalidArgument, "metrics: " + why);
  std::unique_ptr<HttpEndpoint> e(new HttpEndpoint(std::move(render)));
  e->guard_ = std::make_unique<Guard>(limits);
  Guard* guard = e->guard_.get();
  // libmicrohttpd's own limit is only a backstop for descriptors: the guard
  // keeps `connections` open, and those it has shut are gone within one turn
  // of libmicrohttpd's loop.
  const unsigned backstop = 2 * limits.connections + 8;
  e->daemon_ = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, nullptr, nullptr, &answer, e.get(),
      MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr*>(&sa), MHD_OPTION_CONNECTION_LIMIT, backstop,
      MHD_OPTION_CONNECTION_TIMEOUT, kTimeoutSeconds, MHD_OPTION_NOTIFY_CONNECTION, &noteConnection,
      guard, MHD_OPTION_END);
  if (!e->daemon_) return Error(ErrorCode::kUnavailable, "metrics: cannot listen on " + address);
  const MHD_DaemonInfo* info = MHD_get_daemon_info(e->daemon_, MHD_DAEMON_INFO_BIND_PORT);
  e->port_ = info ? info->port : 0;
  guard->startWatchdog();
  return e;
}

// The watchdog stops first; libmicrohttpd then closes what is left, telling
// the guard of each connection as it goes.
HttpEndpoint::~HttpEndpoint() {
  if (guard_) guard_->stop();
  if (daemon_) MHD_stop_daemon(daemon_);
}

}  // namespace accel::metrics
