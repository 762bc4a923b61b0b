#pragma once
// The appliance time budget of one job: how much of it is used, when the
// warning and the enforcement are due. Pure functions of the record and a
// clock value, so the daemon, a restart and the tests all agree.
//
// Time accrues while at least one activity source is on: an appliance job of
// the job is running (times as the appliance reports them), or, for a job
// holding local accelerators or IPUs of an IPU-POD, one of its steps runs
// (the batch step too). Queue time, prolog time and gaps between steps never
// count. All times are CLOCK_REALTIME ns, so a
// persisted budget means the same after a daemon restart.
#include <cstdint>
#include <string>
#include <vector>

#include "accel/appliance/appliance.h"

namespace accel::agent {

// One stretch of activity: an appliance job's run (key = its id) or a run
// of the job's steps (key kLocalStepsKey). end_ns 0: still going.
struct ActiveInterval {
  std::string key;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool operator==(const ActiveInterval&) const = default;
};

inline constexpr const char* kLocalStepsKey = "steps";

// Persisted in the job record. Zero times mean "not yet".
struct ApplianceBudget {
  std::vector<ActiveInterval> runs;
  int64_t warned_ns = 0;    // warning signal sent
  int64_t enforced_ns = 0;  // SIGTERM sent, appliance jobs cancelled
  int64_t killed_ns = 0;    // SIGKILL sent to what was left
  // What earlier runs of a requeued job used, counted against this run's
  // limit (ApplianceTimeOnRequeue=cumulative); never part of usedNs(), which
  // is this run's own.
  int64_t carried_ns = 0;
  bool operator==(const ApplianceBudget&) const = default;
};

// Records the run of one appliance job as the appliance reports it (a job
// that never left the queue adds nothing, but one that ended so closes the
// run a placeholder for it opened: see ApplianceWatcher). Returns whether
// anything changed.
bool noteApplianceJob(ApplianceBudget& budget, const appliance::ApplianceJob& job);

// Opens (running) or closes the local steps' interval at `at_ns`; a second
// open or close is no change. Returns whether anything changed.
bool noteLocalSteps(ApplianceBudget& budget, bool running, int64_t at_ns);

// Used time up to `now_ns`: the union of the runs, open ones up to now.
int64_t usedNs(const ApplianceBudget& budget, int64_t now_ns);

// Used time of a run whose epilog came at `end_ns`. Until the limit it is
// usedNs(); past the limit (SIGTERM sent) the job holds what it holds until
// it is over on this node, so the time from SIGTERM to the epilog counts in
// full, but never past SIGKILL. Every node of a job ends it together
// (slurmctld ends the job everywhere at once), so each counts the same time
// past the limit, whatever its own steps did after SIGTERM.
int64_t usedAtEndNs(const ApplianceBudget& budget, int64_t end_ns);

// What the limit asks for. `limit_sec` <= 0 means no limit: never due.
struct LimitPolicy {
  int64_t limit_sec = -1;
  int32_t signal = 0;  // 0: no warning
  uint32_t lead_sec = 0;
  int64_t grace_ns = 30'000'000'000;
};

enum class LimitAction { kNone, kWarn, kEnforce, kKill };

// When each pending action falls due, 0 when it is not pending or cannot be
// timed yet (idle with budget left: the deadline moves with activity). An
// exhausted budget while idle is due at once (returned as `now_ns`). What the
// budget carries from earlier runs shortens the limit; a run left with
// nothing is warned and stopped as soon as anything of it runs.
struct LimitTimes {
  int64_t warn_ns = 0;
  int64_t enforce_ns = 0;
  int64_t kill_ns = 0;
  int64_t earliest() const;  // smallest non-zero, 0 if none
};
LimitTimes limitTimes(const ApplianceBudget& budget, const LimitPolicy& policy, int64_t now_ns);

// The first action due at `now_ns`, in the order warn, enforce, kill.
LimitAction dueAction(const ApplianceBudget& budget, const LimitPolicy& policy, int64_t now_ns);

}  // namespace accel::agent
