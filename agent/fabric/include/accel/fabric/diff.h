#pragma once
// Comparing what a NIC should look like with what the kernel reports: the
// changes set-up and teardown make, and the read-back check after set-up.
// Pure functions of values, so each rule is tested on literal input.
#include <optional>
#include <string>
#include <vector>

#include "accel/fabric/ledger.h"
#include "accel/fabric/links.h"

namespace accel::fabric {

// A NIC's state while jobs hold it.
struct NicTarget {
  std::optional<uint32_t> mtu;      // none: the MTU is left as it is
  std::vector<Ipv4Cidr> addresses;  // on the link, with these prefix lengths
  std::vector<Ipv4Cidr> routes;     // routed through the link
};

// The link change that takes `now` to the target: up, promote_secondaries
// on, and the MTU. Only fields that differ are set; empty when none does.
LinkChange changeToward(const NicTarget& target, const LinkInfo& now);

// The link change that puts back what `original` recorded, for the fields
// that differ from `now`.
LinkChange changeToRestore(const LedgerNic& original, const LinkInfo& now);

// Every way the link differs from the target, as short phrases ("mtu 1500,
// want 9000", "address 10.9.0.5/24 missing"); empty when it matches.
// Addresses and routes of other links, and extra ones on this link, are
// not differences.
std::vector<std::string> diffNic(const NicTarget& target, const LinkInfo& now,
                                 const std::vector<AddressEntry>& addresses,
                                 const std::vector<RouteEntry>& routes);

}  // namespace accel::fabric
