#pragma once
// The IPU seam: what the agent asks of a V-IPU controller, in our own types.
// The real adapter is VipuCli (the vendor's `vipu` client program); tests run
// it against the fake client in tests/hw_mock.
#include <cstdint>
#include <string>
#include <vector>

#include "accel/common/result.h"

namespace accel::ipu {

struct PartitionSpec {
  std::string name;       // e.g. "p42": derived from the job id, never from user text
  uint32_t ipus = 0;      // power of two
  uint32_t gcds = 1;      // graph compilation domains: one per task on the node
  uint32_t replicas = 0;  // 0: the controller's default
};

// The IPUoF configuration of one GCD, as the controller gave it (JSON text
// that Poplar's IPUoF client reads from IPUOF_CONFIG_PATH).
struct GcdConfig {
  uint32_t gcd = 0;
  std::string config;
};

class PartitionController {
 public:
  virtual ~PartitionController() = default;
  // Errors: kConflict (the name exists), kInvalidArgument (the controller
  // refuses the sizes), kUnavailable/kTimeout (controller unreachable after
  // retries), kIo (any other refusal).
  virtual Status create(const PartitionSpec& spec) = 0;
  // A partition that does not exist is success.
  virtual Status remove(const std::string& name) = 0;
  // One entry per GCD, ordered by GCD index. kNotFound if there is no such partition.
  virtual Result<std::vector<GcdConfig>> ipuofConfigs(const std::string& name) = 0;
  // For log lines: "vipu at 10.1.2.3:8090".
  virtual std::string describe() const = 0;
};

}  // namespace accel::ipu
