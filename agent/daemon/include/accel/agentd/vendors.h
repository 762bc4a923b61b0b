#pragma once
// The vendor control planes this node uses, from its config files: the V-IPU
// controller when a vipu.conf sits beside accel.conf, the appliance when
// ApplianceCommand is set. With a hardware-mock directory (--hw-mock or
// HwMockDir), the clients are the fakes in <dir>/bin and the topology is
// <dir>/topology.xml unless one is given explicitly.
#include <chrono>
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

// Errors name the file (vipu.conf problems, a secure config whose key file
// others can read, a mock directory without its clients).
Result<Vendors> setUpVendors(const AccelConfig& config, const std::string& accel_conf_path,
                             const std::optional<std::string>& hw_mock_override);

// How long a follower's prolog waits for the job's partition to appear: half
// of HookTimeout. Each poll is one controller call, itself bounded by a third
// of HookTimeout (vipu retries), so the last one ends by five sixths of it
// and the hook answers before accelctl gives up on the daemon.
std::chrono::milliseconds followerWaitBudget(std::chrono::seconds hook_timeout);

}  // namespace accel::agentd
