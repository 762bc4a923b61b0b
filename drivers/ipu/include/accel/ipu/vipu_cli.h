#pragma once
// PartitionController over the `vipu` command-line client. Each call runs the
// client with the controller's address (and, with IsSecure, the user, access
// key and TLS files) from vipu.conf. All attempts of one operation share one
// budget of ApiTimeout; transient failures (controller unreachable, client
// timed out or killed, malformed output) are retried with backoff, refusals
// (exists, not found, bad sizes) are not.
#include <string>

#include "accel/common/vipu_config.h"
#include "accel/exec/client_process.h"
#include "accel/ipu/partition_controller.h"

namespace accel::ipu {

// Parses the output of `vipu get partition NAME --ipu-configs`:
// {"partition": NAME, "gcds": [{"gcd": 0, "config": {...}}, ...]}. Every GCD
// from 0 to n-1 must appear exactly once, and the partition must be `name`.
Result<std::vector<GcdConfig>> parseIpuConfigs(std::string_view text, std::string_view name);

class VipuCli : public PartitionController {
 public:
  VipuCli(VipuConfig config, std::string program, exec::RetryPolicy retry);

  Status create(const PartitionSpec& spec) override;
  Status remove(const std::string& name) override;
  Result<std::vector<GcdConfig>> ipuofConfigs(const std::string& name) override;
  std::string describe() const override;

  // Checks that a secure config's key and certificate files exist and that
  // the client key is readable by its owner only. Called at daemon start.
  static Status checkSecureFiles(const VipuConfig& config);

 private:
  std::vector<std::string> command(std::vector<std::string> args) const;
  Result<exec::ClientResult> run(const std::vector<std::string>& args, bool accept_not_found);

  VipuConfig config_;
  std::string program_;
  exec::RetryPolicy retry_;
};

}  // namespace accel::ipu
