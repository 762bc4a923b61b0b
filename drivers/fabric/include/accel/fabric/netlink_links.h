#pragma once
// Links over rtnetlink with libnl-route. libnl stays in netlink_links.cpp:
// this header only forward-declares its socket type.
#include <chrono>
#include <memory>
#include <mutex>

#include "accel/fabric/links.h"

struct nl_sock;

namespace accel::fabric {

class NetlinkLinks : public Links {
 public:
  // Opens a NETLINK_ROUTE socket in the calling thread's network namespace
  // (a thread that entered a namespace with unshare or setns gets that one).
  // Every request waits at most `timeout` for the kernel's answer, so no
  // call can hang. kIo when the socket cannot be opened.
  static Result<std::unique_ptr<NetlinkLinks>> open(
      std::chrono::milliseconds timeout = std::chrono::seconds(5));
  ~NetlinkLinks() override;
  NetlinkLinks(const NetlinkLinks&) = delete;
  NetlinkLinks& operator=(const NetlinkLinks&) = delete;

  Result<std::optional<LinkInfo>> findLink(const std::string& name) override;
  Status changeLink(int ifindex, const LinkChange& change) override;
  Result<std::vector<AddressEntry>> addresses() override;
  Status addAddress(int ifindex, const Ipv4Cidr& address) override;
  Status removeAddress(int ifindex, const Ipv4Cidr& address) override;
  Result<std::vector<RouteEntry>> routes() override;
  Status addRoute(int ifindex, const Ipv4Cidr& destination) override;
  Status removeRoute(int ifindex, const Ipv4Cidr& destination) override;

 private:
  explicit NetlinkLinks(nl_sock* sock) : sock_(sock) {}
  // One socket, one request at a time: libnl sockets are not thread-safe.
  std::mutex mu_;
  nl_sock* sock_;
};

}  // namespace accel::fabric
