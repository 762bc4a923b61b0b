#pragma once
// The fabric ledger: what this agent changed on which NIC, for which job,
// and how each NIC was before the first job took it. It is written before
// every change, so after a crash teardown knows everything that may have
// been done (and removing what never happened is harmless).
//
// Encoding: JSON text with "version": 1. Decoding is strict: every key is
// required, unknown keys, wrong types, out-of-range numbers, duplicates and
// jobs naming a NIC the ledger does not hold are refused (kParse), because a
// ledger read wrongly would make teardown undo the wrong thing.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/result.h"
#include "accel/fabric/ipv4.h"

namespace accel::fabric {

// A NIC held by at least one job: its state before the first of them.
struct LedgerNic {
  std::string name;
  int ifindex = 0;  // a NIC of this name with another index is a different device
  uint32_t original_mtu = 0;
  bool original_up = false;
  bool original_promote_secondaries = false;
  // Routes this agent added on the NIC; removed when the last job leaves.
  // Routes that were there before are never listed (nor removed).
  std::vector<Ipv4Cidr> routes;
  friend bool operator==(const LedgerNic&, const LedgerNic&) = default;
};

struct LedgerJobNic {
  std::string nic;
  std::optional<Ipv4Cidr> address;  // none when no address range is configured
  friend bool operator==(const LedgerJobNic&, const LedgerJobNic&) = default;
};

struct LedgerJob {
  uint32_t job_id = 0;
  std::vector<LedgerJobNic> nics;
  friend bool operator==(const LedgerJob&, const LedgerJob&) = default;
};

struct Ledger {
  std::vector<LedgerNic> nics;  // sorted by name
  std::vector<LedgerJob> jobs;  // sorted by job id
  friend bool operator==(const Ledger&, const Ledger&) = default;

  const LedgerJob* job(uint32_t job_id) const;
  const LedgerNic* nic(const std::string& name) const;
  LedgerNic* nic(const std::string& name);
  // Jobs other than `except` that use the NIC.
  size_t users(const std::string& nic, std::optional<uint32_t> except = std::nullopt) const;
  // Every address any job holds.
  std::vector<uint32_t> addresses() const;
  void removeJob(uint32_t job_id);
  void removeNic(const std::string& name);
  void sort();
};

std::string encodeLedger(const Ledger& ledger);
Result<Ledger> decodeLedger(std::string_view text);

}  // namespace accel::fabric
