// ReserveSpace: the reserves on the file systems of the agent's records
// (space_reserve.h), held at start and watched from the loop, which says in
// the journal and in `accelctl status` when one was given up for a write and
// when it is held again.
#include <string>

#include "accel/agentd/daemon.h"
#include "accel/common/log.h"
#include "accel/common/space_reserve.h"

namespace accel::agentd {

// The job table, StateDir (the fabric ledger) and the event spool; one
// reserve per file system, whichever of them names it first. A reserve that
// cannot be held now (the file system is already full) leaves the daemon
// running and its new jobs refused until there is room.
void Daemon::holdReserves() {
  if (config_.reserve_space == 0) return;
  const std::string spool =
      config_.event_spool_dir.value_or(config_.state_dir + "/spool");  // as the outbox
  for (const std::string& dir : {config_.run_dir + "/state", config_.state_dir, spool}) {
    Status s = space::hold(dir, config_.reserve_space);
    if (!s.ok())
      log::warning("start: no reserve on the file system holding " + dir + ": " +
                   s.error().message() + "; no new job is taken until it can be held");
  }
  for (const auto& r : space::reserves())
    if (r.held)
      log::info("start: " + std::to_string(r.bytes / 1024) + " KiB reserved in " + r.dir + "/" +
                space::kReserveFile + " (ReserveSpace)");
  noteReserves();
}

// Called with each status update (after hooks): a reserve given up since the
// last look is a node fault for `accelctl status` and a line in the journal;
// one held again, a line.
void Daemon::noteReserves() {
  for (const auto& r : space::reserves()) {
    int64_t& seen = reserve_released_seen_[r.dir];
    if (!r.held && r.released_ns != seen) {
      seen = r.released_ns;
      const std::string what =
          "the file system holding " + r.dir + " is full (" + std::to_string(r.free_bytes / 1024) +
          " KiB free): its reserve of " + std::to_string(r.bytes / 1024) +
          " KiB went to the agent's records; no new job is taken until it has room again";
      log::error("space: " + what);
      health_->nodeFault(what);
    }
    bool& held = reserve_held_[r.dir];
    if (r.held && !held && r.released_ns != 0)
      log::info("space: the reserve in " + r.dir + " is held again; new jobs are taken");
    held = r.held;
  }
}

}  // namespace accel::agentd
