#pragma once
// The seam between the fabric logic and the kernel: the few link, address
// and route operations the manager needs, in our own value types. The real
// adapter is NetlinkLinks (netlink_links.h); everything above it (planning,
// ledger, reference counts, rollback) works through this interface only.
//
// Scope: one network namespace (the one the implementation was opened in),
// IPv4 addresses, and routes in the main table. Every call is bounded in time
// by the implementation. Implementations are thread-safe.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accel/common/result.h"
#include "accel/fabric/ipv4.h"

namespace accel::fabric {

struct LinkInfo {
  std::string name;
  int ifindex = 0;
  uint32_t mtu = 0;
  bool up = false;  // administratively up (IFF_UP); carrier is not our business
  // net.ipv4.conf.<link>.promote_secondaries. Without it, deleting the first
  // address of a subnet deletes every other address of that subnet too,
  // which would take another job's address away.
  bool promote_secondaries = false;
};

// Fields to change on a link; unset fields are left alone.
struct LinkChange {
  std::optional<uint32_t> mtu;
  std::optional<bool> up;
  std::optional<bool> promote_secondaries;
  bool empty() const { return !mtu && !up && !promote_secondaries; }
};

// An IPv4 address on a link, with the prefix length it was assigned with.
struct AddressEntry {
  int ifindex = 0;
  Ipv4Cidr address;
};

// An IPv4 route of the main table whose next hop is the link.
struct RouteEntry {
  int ifindex = 0;
  Ipv4Cidr destination;
};

class Links {
 public:
  virtual ~Links() = default;

  // The link called `name`; nullopt when there is none. kIo on failure.
  virtual Result<std::optional<LinkInfo>> findLink(const std::string& name) = 0;
  // kNotFound when the link is gone, kIo when the kernel refuses.
  virtual Status changeLink(int ifindex, const LinkChange& change) = 0;

  // Every IPv4 address in the namespace, on any link.
  virtual Result<std::vector<AddressEntry>> addresses() = 0;
  // kConflict when the link already holds this address, kNotFound when the
  // link is gone, kIo otherwise.
  virtual Status addAddress(int ifindex, const Ipv4Cidr& address) = 0;
  // Success when the address or the link is already gone.
  virtual Status removeAddress(int ifindex, const Ipv4Cidr& address) = 0;

  // Every main-table IPv4 route with a next hop on some link.
  virtual Result<std::vector<RouteEntry>> routes() = 0;
  // A link-scope route to `destination` through the link, appended after any
  // route to the same destination through another link. kConflict when the
  // same route through this link exists, kNotFound when the link is gone.
  virtual Status addRoute(int ifindex, const Ipv4Cidr& destination) = 0;
  // Success when the route or the link is already gone.
  virtual Status removeRoute(int ifindex, const Ipv4Cidr& destination) = 0;
};

}  // namespace accel::fabric
