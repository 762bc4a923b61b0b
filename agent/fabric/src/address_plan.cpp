#include "accel/fabric/address_plan.h"

#include <string>
#include <unordered_set>

namespace accel::fabric {

Result<AddressPool> makeAddressPool(std::string_view range_text, uint8_t subnet_length) {
  auto range = parseNetwork(range_text);
  if (!range.ok()) return range.error().context("address range");
  AddressPool pool;
  pool.range = *range;
  pool.subnet_length = subnet_length == 0 ? range->length : subnet_length;
  if (pool.subnet_length > range->length) {
    return Error(ErrorCode::kInvalidArgument, "address range " + formatCidr(*range) +
                                                  " does not fit in a /" +
                                                  std::to_string(pool.subnet_length) + " subnet");
  }
  const Ipv4Cidr subnet{range->address, pool.subnet_length};
  uint64_t lo = range->network();
  uint64_t hi = range->broadcast();
  // /31 and /32 subnets have no network or broadcast address (RFC 3021).
  if (pool.subnet_length <= 30) {
    if (lo == subnet.network()) ++lo;
    if (hi == subnet.broadcast()) --hi;
  }
  if (lo > hi) {
    return Error(ErrorCode::kInvalidArgument, "address range " + formatCidr(*range) +
                                                  " holds no usable address in a /" +
                                                  std::to_string(pool.subnet_length) + " subnet");
  }
  pool.first = static_cast<uint32_t>(lo);
  pool.size = hi - lo + 1;
  return pool;
}

Result<std::vector<Ipv4Cidr>> planAddresses(const AddressPool& pool, uint32_t job_id, size_t count,
                                            const std::vector<uint32_t>& in_use) {
  ACCEL_CHECK(pool.size > 0);
  const std::unordered_set<uint32_t> taken(in_use.begin(), in_use.end());
  std::vector<Ipv4Cidr> plan;
  const uint64_t start = job_id % pool.size;
  // Every step either takes an address or skips a taken one, so the walk is
  // bounded by taken.size() + count as well as by the pool's size.
  for (uint64_t step = 0; step < pool.size && plan.size() < count; ++step) {
    const auto candidate = static_cast<uint32_t>(pool.first + (start + step) % pool.size);
    if (taken.count(candidate) == 0) plan.push_back({candidate, pool.subnet_length});
  }
  if (plan.size() < count) {
    return Error(ErrorCode::kConflict, "no free address in " + formatCidr(pool.range) +
                                           " for job " + std::to_string(job_id) + " (" +
                                           std::to_string(count) + " needed, " +
                                           std::to_string(plan.size()) + " free)");
  }
  return plan;
}

}  // namespace accel::fabric
