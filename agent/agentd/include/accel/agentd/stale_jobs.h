#pragma once
// Jobs whose epilog never reached the agent. slurmd runs the Epilog once; if
// the agent was down then (the hook fails and the node is drained) or the
// node lost the job some other way, the job's record outlives the job and
// keeps its devices, partition and addresses. At start the agent asks
// slurmctld about every job it re-adopted and finishes the epilog of each one
// slurmctld says is over, through the same path as the Epilog hook (so the
// job's events and summary are complete).
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "accel/agentd/control_handler.h"
#include "accel/agentd/slurmctld.h"
#include "accel/common/result.h"

namespace accel::agentd {

struct StaleSweep {
  size_t asked = 0;                    // jobs slurmctld was asked about
  size_t cleaned = 0;                  // epilogs finished for jobs that were over
  size_t failed = 0;                   // such epilogs that failed (logged; the record stays)
  size_t unconfirmed = 0;              // unknown to slurmctld once, then alive (kept)
  bool slurmctld_unavailable = false;  // stopped early: slurmctld did not answer
};

using PresenceFn = std::function<Result<JobPresence>(uint32_t job_id)>;

inline constexpr std::chrono::milliseconds kStaleConfirmAfter{60000};

// Runs once over the jobs the manager holds now. Stops asking at the first
// job slurmctld cannot answer for (the rest are kept; their epilogs may
// still come), and between jobs when `stop` says so. Logs what it does.
// A job slurmctld does not know (kUnknown) is asked about again after
// `confirm_after` (waited through `sleep`, which returns false when the
// sweep must stop); only a second answer of unknown or gone ends it, and
// only if its record is still held.
StaleSweep sweepStaleJobs(const HandlerContext& ctx, const PresenceFn& presence,
                          const std::function<bool()>& stop = {},
                          std::chrono::milliseconds confirm_after = kStaleConfirmAfter,
                          const std::function<bool(std::chrono::milliseconds)>& sleep = {});

}  // namespace accel::agentd
