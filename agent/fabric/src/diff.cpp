#include "accel/fabric/diff.h"

#include <algorithm>

namespace accel::fabric {

LinkChange changeToward(const NicTarget& target, const LinkInfo& now) {
  LinkChange change;
  if (target.mtu && *target.mtu != now.mtu) change.mtu = target.mtu;
  if (!now.up) change.up = true;
  if (!now.promote_secondaries) change.promote_secondaries = true;
  return change;
}

LinkChange changeToRestore(const LedgerNic& original, const LinkInfo& now) {
  LinkChange change;
  if (original.original_mtu != now.mtu) change.mtu = original.original_mtu;
  if (original.original_up != now.up) change.up = original.original_up;
  if (original.original_promote_secondaries != now.promote_secondaries) {
    change.promote_secondaries = original.original_promote_secondaries;
  }
  return change;
}

std::vector<std::string> diffNic(const NicTarget& target, const LinkInfo& now,
                                 const std::vector<AddressEntry>& addresses,
                                 const std::vector<RouteEntry>& routes) {
  std::vector<std::string> out;
  if (target.mtu && *target.mtu != now.mtu) {
    out.push_back("mtu " + std::to_string(now.mtu) + ", want " + std::to_string(*target.mtu));
  }
  if (!now.up) out.push_back("link down, want up");
  if (!now.promote_secondaries) out.push_back("promote_secondaries off, want on");
  for (const auto& want : target.addresses) {
    bool found = std::any_of(addresses.begin(), addresses.end(), [&](const AddressEntry& a) {
      return a.ifindex == now.ifindex && a.address == want;
    });
    if (!found) out.push_back("address " + formatCidr(want) + " missing");
  }
  for (const auto& want : target.routes) {
    bool found = std::any_of(routes.begin(), routes.end(), [&](const RouteEntry& r) {
      return r.ifindex == now.ifindex && r.destination == want;
    });
    if (!found) out.push_back("route " + formatCidr(want) + " missing");
  }
  return out;
}

}  // namespace accel::fabric
