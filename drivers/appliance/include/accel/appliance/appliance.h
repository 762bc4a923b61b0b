#pragma once
// The appliance seam (Cerebras-style): the appliance jobs that a Slurm job
// started, read through the appliance's own client. The real adapter is
// CsctlCli; tests run it against the fake `csctl` in tests/hw_mock.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/result.h"

namespace accel::appliance {

enum class ApplianceState { kQueued, kRunning, kSucceeded, kFailed, kCancelled };

const char* stateName(ApplianceState state);  // "queued", "running", ...
bool isFinal(ApplianceState state);

// One appliance job that carries a Slurm job id label. Times are
// CLOCK_REALTIME nanoseconds, 0 when the appliance has not reported them.
struct ApplianceJob {
  std::string id;              // e.g. "wsjob-vpd7iavtknrtvgonhe7mog"
  uint32_t slurm_job_id = 0;   // from the label
  ApplianceState state = ApplianceState::kQueued;
  uint32_t systems = 0;        // CS-X systems held; 0 for a compile job
  std::string user;
  int64_t create_ns = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// The label that ties an appliance job to its Slurm job.
inline constexpr std::string_view kSlurmJobLabel = "slurm-job-id";

class ApplianceClient {
 public:
  virtual ~ApplianceClient() = default;
  // Every appliance job that carries a Slurm job id label. Errors:
  // kUnavailable/kTimeout (client could not reach the appliance), kParse.
  virtual Result<std::vector<ApplianceJob>> jobs() = 0;
  // Cancels one job. A job already ended, or unknown, is success.
  virtual Status cancel(const std::string& id) = 0;
  virtual std::string describe() const = 0;
};

// Parses `csctl get jobs -o json`: {"items": [{"name", "labels", "state",
// "systems", "user", "createTime", "startTime", "endTime"}, ...]}. Items
// without a valid Slurm job id label are skipped (other users' work on a
// shared appliance); a malformed item or document is an error, never a crash.
Result<std::vector<ApplianceJob>> parseCsctlJobs(std::string_view text);

// Appliance job ids the agent passes to the client or uses in step names:
// 1-63 characters of [a-z0-9-], starting with a letter.
bool isValidJobId(std::string_view id);

// "2026-11-22T07:00:01.250Z" or with a "+01:00" offset, to ns since the epoch.
Result<int64_t> parseRfc3339(std::string_view text);

}  // namespace accel::appliance
