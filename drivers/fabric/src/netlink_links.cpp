// NetlinkLinks: the Links seam over libnl-route. Every libnl object lives in
// a unique_ptr with its release function, and every libnl error becomes an
// Error whose code says what the caller can do about it.
#include "accel/fabric/netlink_links.h"

#include <arpa/inet.h>
#include <linux/ip.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/inet.h>
#include <netlink/route/route.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace accel::fabric {
namespace {

template <typename T, void (*Release)(T*)>
struct Releaser {
  void operator()(T* p) const {
    if (p) Release(p);
  }
};
using LinkPtr = std::unique_ptr<rtnl_link, Releaser<rtnl_link, rtnl_link_put>>;
using AddrPtr = std::unique_ptr<rtnl_addr, Releaser<rtnl_addr, rtnl_addr_put>>;
using RoutePtr = std::unique_ptr<rtnl_route, Releaser<rtnl_route, rtnl_route_put>>;
using NlAddrPtr = std::unique_ptr<nl_addr, Releaser<nl_addr, nl_addr_put>>;
using CachePtr = std::unique_ptr<nl_cache, Releaser<nl_cache, nl_cache_free>>;

// libnl returns negative NLE_* codes.
bool isGone(int err) { return err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV; }

Error nlError(const std::string& what, int err) {
  ErrorCode code = ErrorCode::kIo;
  if (err == -NLE_EXIST) code = ErrorCode::kConflict;
  if (isGone(err)) code = ErrorCode::kNotFound;
  if (err == -NLE_AGAIN) code = ErrorCode::kTimeout;
  return Error(code, "netlink: " + what + ": " + nl_geterror(err));
}

Status checked(const std::string& what, int err) {
  if (err < 0) return nlError(what, err);
  return okStatus();
}

NlAddrPtr toNlAddr(const Ipv4Cidr& cidr) {
  const uint32_t be = htonl(cidr.address);
  NlAddrPtr addr(nl_addr_build(AF_INET, &be, sizeof(be)));
  ACCEL_CHECK(addr != nullptr);
  nl_addr_set_prefixlen(addr.get(), cidr.length);
  return addr;
}

// An nl_addr of family AF_INET as a value; 0.0.0.0/0 for an empty one (libnl
// gives the default route an address of length 0).
Ipv4Cidr fromNlAddr(nl_addr* addr) {
  Ipv4Cidr cidr;
  if (addr == nullptr) return cidr;
  if (nl_addr_get_len(addr) == 4) {
    uint32_t be = 0;
    std::memcpy(&be, nl_addr_get_binary_addr(addr), sizeof(be));
    cidr.address = ntohl(be);
  }
  cidr.length = static_cast<uint8_t>(nl_addr_get_prefixlen(addr));
  return cidr;
}

AddrPtr addressObject(int ifindex, const Ipv4Cidr& address) {
  AddrPtr addr(rtnl_addr_alloc());
  ACCEL_CHECK(addr != nullptr);
  rtnl_addr_set_ifindex(addr.get(), ifindex);
  rtnl_addr_set_family(addr.get(), AF_INET);
  auto local = toNlAddr(address);
  ACCEL_CHECK(rtnl_addr_set_local(addr.get(), local.get()) == 0);
  rtnl_addr_set_prefixlen(addr.get(), address.length);
  return addr;
}

// The route this agent adds: main table, link scope, tagged "static" so that
// `ip route show proto static` finds it, next hop on the link.
RoutePtr routeObject(int ifindex, const Ipv4Cidr& destination) {
  RoutePtr route(rtnl_route_alloc());
  ACCEL_CHECK(route != nullptr);
  rtnl_route_set_family(route.get(), AF_INET);
  rtnl_route_set_table(route.get(), RT_TABLE_MAIN);
  rtnl_route_set_protocol(route.get(), RTPROT_STATIC);
  rtnl_route_set_scope(route.get(), RT_SCOPE_LINK);
  rtnl_route_set_type(route.get(), RTN_UNICAST);
  auto dst = toNlAddr(destination);
  ACCEL_CHECK(rtnl_route_set_dst(route.get(), dst.get()) == 0);
  rtnl_nexthop* hop = rtnl_route_nh_alloc();
  ACCEL_CHECK(hop != nullptr);
  rtnl_route_nh_set_ifindex(hop, ifindex);
  rtnl_route_add_nexthop(route.get(), hop);  // the route owns the hop now
  return route;
}

Result<LinkInfo> linkInfo(rtnl_link* link) {
  LinkInfo info;
  const char* name = rtnl_link_get_name(link);
  info.name = name ? name : "";
  info.ifindex = rtnl_link_get_ifindex(link);
  info.mtu = rtnl_link_get_mtu(link);
  info.up = (rtnl_link_get_flags(link) & IFF_UP) != 0;
  uint32_t promote = 0;
  int err = rtnl_link_inet_get_conf(link, IPV4_DEVCONF_PROMOTE_SECONDARIES, &promote);
  if (err < 0) return nlError(info.name + ": IPv4 settings", err);
  info.promote_secondaries = promote != 0;
  return info;
}

std::string ifText(int ifindex) { return "link " + std::to_string(ifindex); }

// Adds the main-table next hops of one RTM_NEWROUTE message to the
// std::vector<RouteEntry> at `arg`.
int collectRoute(nl_msg* msg, void* arg) {
  rtnl_route* raw = nullptr;
  if (rtnl_route_parse(nlmsg_hdr(msg), &raw) < 0) return NL_SKIP;
  RoutePtr route(raw);
  if (rtnl_route_get_table(route.get()) != RT_TABLE_MAIN) return NL_OK;
  const Ipv4Cidr dst = fromNlAddr(rtnl_route_get_dst(route.get()));
  auto* out = static_cast<std::vector<RouteEntry>*>(arg);
  for (int i = 0; i < rtnl_route_get_nnexthops(route.get()); ++i) {
    const int ifindex = rtnl_route_nh_get_ifindex(rtnl_route_nexthop_n(route.get(), i));
    if (ifindex > 0) out->push_back({ifindex, dst});
  }
  return NL_OK;
}

// A dump the kernel interrupted (the table changed meanwhile) is retried a
// few times; each attempt is bounded by the socket timeout.
template <typename Alloc>
Result<CachePtr> dump(const char* what, Alloc alloc) {
  int err = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    nl_cache* raw = nullptr;
    err = alloc(&raw);
    CachePtr cache(raw);
    if (err >= 0) return cache;
    if (err != -NLE_DUMP_INTR) break;
  }
  return nlError(what, err);
}

}  // namespace

Result<std::unique_ptr<NetlinkLinks>> NetlinkLinks::open(std::chrono::milliseconds timeout) {
  nl_sock* sock = nl_socket_alloc();
  if (sock == nullptr) return Error(ErrorCode::kIo, "netlink: cannot allocate a socket");
  std::unique_ptr<NetlinkLinks> links(new NetlinkLinks(sock));
  ACCEL_TRY(checked("connect", nl_connect(sock, NETLINK_ROUTE)));
  const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  timeval tv{static_cast<time_t>(usec / 1000000), static_cast<suseconds_t>(usec % 1000000)};
  const int fd = nl_socket_get_fd(sock);
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
    return sysError("netlink: socket timeout", errno);
  }
  return links;
}

NetlinkLinks::~NetlinkLinks() { nl_socket_free(sock_); }

Result<std::optional<LinkInfo>> NetlinkLinks::findLink(const std::string& name) {
  // No link can have a longer or empty name; the kernel would call it invalid.
  if (name.empty() || name.size() >= IFNAMSIZ) return std::optional<LinkInfo>();
  std::lock_guard lock(mu_);
  rtnl_link* raw = nullptr;
  int err = rtnl_link_get_kernel(sock_, 0, name.c_str(), &raw);
  LinkPtr link(raw);
  if (isGone(err)) return std::optional<LinkInfo>();
  if (err < 0) return nlError(name + ": read link", err);
  auto info = linkInfo(link.get());
  if (!info.ok()) return info.error();
  return std::optional<LinkInfo>(std::move(*info));
}

Status NetlinkLinks::changeLink(int ifindex, const LinkChange& change) {
  if (change.empty()) return okStatus();
  std::lock_guard lock(mu_);
  rtnl_link* raw = nullptr;
  int err = rtnl_link_get_kernel(sock_, ifindex, nullptr, &raw);
  LinkPtr orig(raw);
  if (err < 0) return nlError(ifText(ifindex) + ": read link", err);
  LinkPtr changes(rtnl_link_alloc());
  ACCEL_CHECK(changes != nullptr);
  if (change.mtu) rtnl_link_set_mtu(changes.get(), *change.mtu);
  if (change.up && *change.up) rtnl_link_set_flags(changes.get(), IFF_UP);
  if (change.up && !*change.up) rtnl_link_unset_flags(changes.get(), IFF_UP);
  if (change.promote_secondaries) {
    err = rtnl_link_inet_set_conf(changes.get(), IPV4_DEVCONF_PROMOTE_SECONDARIES,
                                  *change.promote_secondaries ? 1 : 0);
    if (err < 0) return nlError(ifText(ifindex) + ": IPv4 settings", err);
  }
  return checked(ifText(ifindex) + ": change link",
                 rtnl_link_change(sock_, orig.get(), changes.get(), 0));
}

Result<std::vector<AddressEntry>> NetlinkLinks::addresses() {
  std::lock_guard lock(mu_);
  auto cache =
      dump("list addresses", [&](nl_cache** out) { return rtnl_addr_alloc_cache(sock_, out); });
  if (!cache.ok()) return cache.error();
  std::vector<AddressEntry> out;
  for (nl_object* obj = nl_cache_get_first(cache->get()); obj; obj = nl_cache_get_next(obj)) {
    auto* addr = reinterpret_cast<rtnl_addr*>(obj);
    if (rtnl_addr_get_family(addr) != AF_INET) continue;
    Ipv4Cidr local = fromNlAddr(rtnl_addr_get_local(addr));
    local.length = static_cast<uint8_t>(rtnl_addr_get_prefixlen(addr));
    out.push_back({rtnl_addr_get_ifindex(addr), local});
  }
  return out;
}

Status NetlinkLinks::addAddress(int ifindex, const Ipv4Cidr& address) {
  std::lock_guard lock(mu_);
  auto addr = addressObject(ifindex, address);
  return checked(ifText(ifindex) + ": add address " + formatCidr(address),
                 rtnl_addr_add(sock_, addr.get(), NLM_F_EXCL));
}

Status NetlinkLinks::removeAddress(int ifindex, const Ipv4Cidr& address) {
  std::lock_guard lock(mu_);
  auto addr = addressObject(ifindex, address);
  int err = rtnl_addr_delete(sock_, addr.get(), 0);
  if (err == -NLE_NOADDR || isGone(err)) return okStatus();
  return checked(ifText(ifindex) + ": remove address " + formatCidr(address), err);
}

Result<std::vector<RouteEntry>> NetlinkLinks::routes() {
  std::lock_guard lock(mu_);
  // Not through a libnl cache: the cache keys routes by destination, table
  // and metric, so a route to the same network through a second link would
  // replace the first in it. Each message is parsed as it arrives instead.
  int err = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<RouteEntry> out;
    err = nl_rtgen_request(sock_, RTM_GETROUTE, AF_INET, NLM_F_DUMP);
    if (err < 0) break;
    // nl_socket_get_cb takes a reference of the socket's callbacks: give it
    // back once cloned, or the socket's set is never freed.
    nl_cb* base = nl_socket_get_cb(sock_);
    std::unique_ptr<nl_cb, Releaser<nl_cb, nl_cb_put>> cb(nl_cb_clone(base));
    nl_cb_put(base);
    ACCEL_CHECK(cb != nullptr);
    nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, collectRoute, &out);
    err = nl_recvmsgs(sock_, cb.get());
    if (err >= 0) return out;
    if (err != -NLE_DUMP_INTR) break;
  }
  return nlError("list routes", err);
}

Status NetlinkLinks::addRoute(int ifindex, const Ipv4Cidr& destination) {
  std::lock_guard lock(mu_);
  auto route = routeObject(ifindex, destination);
  // NLM_F_APPEND without NLM_F_EXCL: IPv4 allows one route per destination
  // and metric unless appended, and a job may use several NICs.
  return checked(ifText(ifindex) + ": add route " + formatCidr(destination),
                 rtnl_route_add(sock_, route.get(), NLM_F_APPEND));
}

Status NetlinkLinks::removeRoute(int ifindex, const Ipv4Cidr& destination) {
  std::lock_guard lock(mu_);
  auto route = routeObject(ifindex, destination);
  int err = rtnl_route_delete(sock_, route.get(), 0);
  if (isGone(err)) return okStatus();
  return checked(ifText(ifindex) + ": remove route " + formatCidr(destination), err);
}

}  // namespace accel::fabric
