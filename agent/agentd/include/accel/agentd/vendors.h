#pragma once
// The vendor control planes this node uses, from its config files: the V-IPU
// controller when a vipu.conf sits beside accel.conf, the appliance when
// ApplianceCommand is set. The daemon sees them through their interfaces
// (PartitionController, ApplianceClient). With a hardware-mock directory (--hw-mock or
// HwMockDir), the clients are the fakes in <dir>/bin and the topology is
// <dir>/topology.xml unless one is given explicitly.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "accel/appliance/appliance.h"
#include "accel/common/config.h"
#include "accel/common/vipu_config.h"
#include "accel/ipu/partition_controller.h"

namespace accel::agentd {

struct Vendors {
  std::string hw_mock_dir;                        // empty: real clients
  std::optional<VipuConfig> vipu;                 // set when vipu.conf exists
  std::shared_ptr<ipu::PartitionController> ipu;  // set with vipu
  std::shared_ptr<appliance::ApplianceClient> appliance;
  std::optional<std::string> topology_xml;  // from the mock dir, if any
};

// Makes a node's vendor clients. Errors name the file (vipu.conf problems, a
// secure config whose key file others can read, a mock directory without its
// clients).
using VendorSetUp =
    std::function<Result<Vendors>(const AccelConfig& config, const std::string& accel_conf_path,
                                  const std::optional<std::string>& hw_mock)>;

// The real one: VipuCli and CsctlCli. Defined in vendors.cpp, which only the
// accel-agentd executable compiles: the daemon's library links the vendor
// interfaces alone (accel_ipu_api, accel_appliance_api).
Result<Vendors> setUpVendors(const AccelConfig& config, const std::string& accel_conf_path,
                             const std::optional<std::string>& hw_mock_override);

// How long a follower's prolog waits for the job's partition to appear: half
// of HookTimeout. Each poll is one controller call, itself bounded by a third
// of HookTimeout (vipu retries), so the last one ends by five sixths of it
// and the hook answers before accelctl gives up on the daemon.
inline std::chrono::milliseconds followerWaitBudget(std::chrono::seconds hook_timeout) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(hook_timeout) / 2;
}

}  // namespace accel::agentd
