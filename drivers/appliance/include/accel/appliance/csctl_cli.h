#pragma once
// ApplianceClient over the appliance's `csctl` command-line client: reads
// with `csctl get jobs -o json`, cancels with `csctl cancel job ID`. Each call
// is bounded by the timeout; a transient failure is retried once.
#include <chrono>
#include <string>

#include "accel/appliance/appliance.h"
#include "accel/exec/client_process.h"

namespace accel::appliance {

class CsctlCli : public ApplianceClient {
 public:
  CsctlCli(std::string program, std::chrono::milliseconds timeout);

  Result<std::vector<ApplianceJob>> jobs() override;
  Status cancel(const std::string& id) override;
  std::string describe() const override { return "appliance client " + program_; }

 private:
  std::string program_;
  std::chrono::milliseconds timeout_;
};

}  // namespace accel::appliance
