#pragma once
// Which fabric addresses a job gets: pure planning over this node's address
// range. Each job starts at a slot derived from its id, so a job gets the
// same addresses on every attempt unless something else took them, and
// consecutive job ids spread over the range.
#include <cstdint>
#include <string_view>
#include <vector>

#include "accel/common/result.h"
#include "accel/fabric/ipv4.h"

namespace accel::fabric {

// This node's block of the fabric subnet. The block is what the node may hand
// out; `subnet_length` is the prefix length every address is assigned with
// (the whole fabric subnet, so that peers on other nodes are on-link).
struct AddressPool {
  Ipv4Cidr range;             // canonical network, e.g. 10.9.3.0/26
  uint8_t subnet_length = 0;  // <= range.length, e.g. 16 for 10.9.0.0/16
  // Usable addresses are [first, first + size): the range minus the
  // subnet's network and broadcast addresses where the range holds them
  // (subnets of /30 and wider; a /31 or /32 subnet has neither).
  uint32_t first = 0;
  uint64_t size = 0;  // > 0
};

// `range` as "a.b.c.d/n" with no host bits; `subnet_length` 0 means the
// range's own length. kInvalidArgument (with the reason) when the text is not
// a network, the subnet is narrower than the range, or no address is usable
// (e.g. 10.9.0.0/32 in a /24 subnet: that is the subnet's network address).
Result<AddressPool> makeAddressPool(std::string_view range, uint8_t subnet_length = 0);

// `count` addresses for `job_id`: walks the usable addresses from slot
// job_id % size upward, wrapping once, skipping every address in `in_use`
// (any prefix length; only the address counts). The result is in walk order
// and carries subnet_length. kConflict naming the range when fewer than
// `count` are free. The walk stops after at most in_use.size() + count
// steps, so a /0 range costs nothing. count 0 gives an empty plan.
Result<std::vector<Ipv4Cidr>> planAddresses(const AddressPool& pool, uint32_t job_id, size_t count,
                                            const std::vector<uint32_t>& in_use);

}  // namespace accel::fabric
