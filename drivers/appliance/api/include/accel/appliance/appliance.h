#pragma once
// The appliance seam (Cerebras-style): the appliance jobs that a Slurm job
// started, read through the appliance's own client. The interface and its
// value types are the target accel_appliance_api, which the agent links; the
// real adapter is CsctlCli (accel_appliance, wired in by accel-agentd's
// vendors.cpp); tests run it against the fake `csctl` in tests/hw_mock.
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
//
// The label is the submitting user's to choose, so it says which Slurm job
// the work claims to belong to, not that it does: the owner (user, uid) is
// what the appliance itself recorded about who submitted it (ownedBy).
//
// An item whose label and owner could be read but whose rest could not (a
// state the agent does not know, a bad time) is kept, with `unreadable`
// saying why: its Slurm job is then treated conservatively, the other jobs
// of the list are not affected. Such an item has only id (empty when its
// name was not valid either), slurm_job_id, user and uid set.
struct ApplianceJob {
  std::string id;             // e.g. "wsjob-vpd7iavtknrtvgonhe7mog"
  uint32_t slurm_job_id = 0;  // from the label
  ApplianceState state = ApplianceState::kQueued;
  uint32_t systems = 0;  // CS-X systems held; 0 for a compile job
  std::string user;      // owner's name as the appliance reports it; empty: not reported
  int64_t uid = -1;      // owner's uid as the appliance reports it; -1: not reported
  int64_t create_ns = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::string unreadable;  // empty, or why the item could not be read
};

// At most this many items are read from one listing; a longer one is an
// error (the client's output is bounded too, at 4 MiB).
inline constexpr size_t kMaxListedJobs = 20000;
// Owner names longer than this are not names (and are not kept).
inline constexpr size_t kMaxUserNameBytes = 64;

// Whether `job` was submitted by the Slurm job's user: by uid when the
// appliance reports one, else by name. A job whose owner the appliance does
// not report belongs to nobody.
bool ownedBy(const ApplianceJob& job, uint32_t uid, std::string_view user);

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

// Appliance job ids the agent passes to the client or uses in step names:
// 1-63 characters of [a-z0-9-], starting with a letter.
bool isValidJobId(std::string_view id);

}  // namespace accel::appliance
