#pragma once
// IPv4 addresses and prefixes as plain values. Everything the fabric code
// plans, persists and compares is IPv4: the fabrics it serves (RoCE for IPUs,
// appliance links) are configured with IPv4 subnets. Parsing is strict so
// that a typo in the configuration is refused, never reinterpreted.
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "accel/common/result.h"

namespace accel::fabric {

// An address with a prefix length: either a network ("10.9.0.0/24") or an
// address as it sits on an interface ("10.9.0.5/24"). `address` is in host
// byte order, so 10.0.0.1 is 0x0a000001.
struct Ipv4Cidr {
  uint32_t address = 0;
  uint8_t length = 0;  // 0..32

  uint32_t mask() const { return length == 0 ? 0 : ~uint32_t{0} << (32 - length); }
  uint32_t network() const { return address & mask(); }
  uint32_t broadcast() const { return network() | ~mask(); }
  // True when no host bit is set (the canonical way to write a network).
  bool isNetwork() const { return address == network(); }
  bool contains(uint32_t a) const { return (a & mask()) == network(); }

  friend auto operator<=>(const Ipv4Cidr&, const Ipv4Cidr&) = default;
};

// Dotted quad, exactly four decimal parts of 0..255 without leading zeros
// ("010.1.1.1" is refused: some tools read it as octal). kInvalidArgument.
Result<uint32_t> parseIpv4(std::string_view text);

// "a.b.c.d/n" with n in 0..32, written without leading zeros; the slash is
// required. Host bits are kept: "10.9.0.5/24" is an interface address.
// kInvalidArgument, with the text quoted.
Result<Ipv4Cidr> parseCidr(std::string_view text);

// parseCidr, and the host bits must be zero ("10.9.0.0/24", not "10.9.0.1/24").
Result<Ipv4Cidr> parseNetwork(std::string_view text);

std::string formatIpv4(uint32_t address);
std::string formatCidr(const Ipv4Cidr& cidr);

}  // namespace accel::fabric
