#pragma once
// Per-job fabric set-up and teardown on the node's fabric NICs.
//
// For each job: bring its NICs up with the configured MTU, give the job one
// address per NIC from this node's range, route the accelerators' subnets
// through the NICs, read everything back; at the job's end remove exactly
// what the job added. MTU, link state and routes are shared by the jobs on a
// NIC and put back only when the last of them leaves.
//
// Durability: a ledger file in the state directory records every change
// before it is made, and each NIC's state before the first job took it.
// Teardown works from the ledger alone, so a restarted daemon (a new
// FabricManager on the same directory) cleans up after the old one.
//
// Errors: every message starts with "fabric: " and names the interface when
// one is involved, e.g. "fabric: eth3: address 10.9.0.5/24 already present
// (not ours)". Codes, all node faults except kInvalidArgument:
//   kInvalidArgument  bad configuration or a bad interface name (setUp);
//   kNotFound         a job's interface does not exist;
//   kConflict         an address or route is held by someone else, the
//                     range has no free address, an interface was replaced
//                     while jobs hold it, or another manager holds the
//                     state directory;
//   kIo / kTimeout    netlink refused or did not answer, the read-back check
//                     failed, or the ledger cannot be written;
//   kParse            the ledger on disk is corrupt (open).
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accel/common/result.h"
#include "accel/fabric/address_plan.h"
#include "accel/fabric/ledger.h"
#include "accel/fabric/links.h"

namespace accel::fabric {

struct FabricConfig {
  // Fabric interfaces named by the operator; only chooseFabricNics reads it.
  std::vector<std::string> interfaces;
  uint32_t mtu = 0;                 // 0: leave the MTU alone; else 68..65535 (RoCE: 9000)
  std::string address_range;        // this node's block, e.g. "10.9.0.0/24"; empty: no addresses
  uint8_t address_prefix = 0;       // prefix length addresses get; 0: the range's own
  std::vector<std::string> routes;  // networks routed through the NICs, e.g. "10.10.0.0/16"
  std::string state_dir;            // absolute; made (0700) if missing; holds fabric.json
};

struct NicFabric {
  std::string nic;
  std::optional<Ipv4Cidr> address;  // the job's address on it; none without a range
};

// What a job got, for the task environment (fabricEnvironment).
struct JobFabric {
  uint32_t job_id = 0;
  std::vector<NicFabric> nics;  // in the order setUp was given
  std::optional<uint32_t> mtu;
  std::vector<Ipv4Cidr> routes;
};

struct NicUsage {
  std::string nic;
  int ifindex = 0;
  std::vector<uint32_t> jobs;  // ascending
  uint32_t original_mtu = 0;
  bool original_up = false;
};

// ACCEL_FABRIC_NICS (comma-separated), ACCEL_FABRIC_ADDRESSES (the job's
// addresses without prefix, in the same order), ACCEL_FABRIC_PREFIX and
// ACCEL_FABRIC_MTU, each only when it has a value. Empty for a job without
// fabric NICs.
std::vector<std::pair<std::string, std::string>> fabricEnvironment(const JobFabric& fabric);

class FabricManager {
 public:
  // Checks `config`, takes the state directory (an exclusive lock on
  // fabric.lock, held while the object lives) and reads its ledger, if any.
  // `links` must be opened in the network namespace to manage.
  static Result<std::unique_ptr<FabricManager>> open(FabricConfig config,
                                                     std::unique_ptr<Links> links);
  ~FabricManager();
  FabricManager(const FabricManager&) = delete;
  FabricManager& operator=(const FabricManager&) = delete;

  // Sets up the job's fabric on `nics` (from chooseFabricNics). A job that
  // is already in the ledger (a retried prolog) is torn down first. On any
  // failure everything this call did is undone before it returns; if the
  // undo itself fails, its reason is appended and the ledger keeps what is
  // left, for tearDown to finish. An empty `nics` succeeds and records
  // nothing.
  Result<JobFabric> setUp(uint32_t job_id, const std::vector<std::string>& nics);

  // Removes what the job added; the last job on a NIC also removes the
  // routes added for it and puts back its MTU, link state and
  // promote_secondaries. Idempotent: an unknown job, an address or route
  // already gone, or an interface that vanished are success. On failure the
  // job stays in the ledger and a later call retries.
  Status tearDown(uint32_t job_id);

  // Jobs in the ledger (set up, or left by a failed teardown), ascending.
  std::vector<uint32_t> jobs() const;
  // The fabric of a job in the ledger, MTU and routes as configured now.
  std::optional<JobFabric> job(uint32_t job_id) const;
  // The NICs held by jobs, by name.
  std::vector<NicUsage> usage() const;

 private:
  FabricManager(FabricConfig config, std::unique_ptr<Links> links, int lock_fd);
  Result<JobFabric> setUpLocked(uint32_t job_id, const std::vector<std::string>& nics);
  Result<std::vector<LinkInfo>> readLinks(const std::vector<std::string>& nics);
  Result<Ledger> plan(uint32_t job_id, const std::vector<LinkInfo>& links);
  Status apply(const LedgerJob& job, const std::vector<LinkInfo>& links);
  Status addJobAddress(const LedgerJobNic& nic, int ifindex);
  Status addNicRoute(const LinkInfo& link, const Ipv4Cidr& route);
  Status verify(const LedgerJob& job, const std::vector<LinkInfo>& links);
  Status tearDownLocked(uint32_t job_id);
  Status restoreNic(const LedgerNic& nic);
  Result<std::optional<LinkInfo>> sameLink(const LedgerNic& nic);
  Status persist(Ledger next);
  JobFabric describe(const LedgerJob& job) const;

  const FabricConfig config_;
  std::optional<AddressPool> pool_;
  std::vector<Ipv4Cidr> routes_;
  std::string ledger_path_;
  int lock_fd_;
  mutable std::mutex mu_;  // one set-up or teardown at a time; guards everything below
  std::unique_ptr<Links> links_;
  Ledger ledger_;
};

}  // namespace accel::fabric
