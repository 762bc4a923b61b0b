#pragma once
// ApplianceClient over the appliance's `csctl` command-line client: reads
// with `csctl get jobs -o json`, cancels with `csctl cancel job ID`. Each call
// is bounded by the timeout; a transient failure is retried once.
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "accel/appliance/appliance.h"
#include "accel/exec/client_process.h"

namespace accel::appliance {

// Parses `csctl get jobs -o json`: {"items": [{"name", "labels", "state",
// "systems", "user", "uid", "createTime", "startTime", "endTime"}, ...]}.
// Items that are not objects or carry no valid Slurm job id label are
// skipped (other work on a shared appliance). A malformed item with a valid
// label is returned with `unreadable` set (see ApplianceJob); only a
// malformed document, or one of more than kMaxListedJobs items, is an error.
// Never a crash.
Result<std::vector<ApplianceJob>> parseCsctlJobs(std::string_view text);

// "2026-11-22T07:00:01.250Z" or with a "+01:00" offset, to ns since the epoch.
Result<int64_t> parseRfc3339(std::string_view text);

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
