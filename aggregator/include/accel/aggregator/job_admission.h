#pragma once
// Which node may report what of a job. A node's key speaks for the jobs that
// ran on that node only (docs/security.md, "Other nodes"):
// - the job's node list comes from the first PrologStarted that has a usable
//   one; from then on only the listed nodes report it. A PrologStarted whose
//   list does not name its own node is refused.
// - without a usable list, the nodes that reported the job first are its
//   nodes (normally the one that sent its first prolog), never any node.
// - a new run of a requeued job (a restart count above the summary's) counts
//   only once slurmctld confirms it: the run slurmctld holds has that restart
//   count and runs on the sender (and on exactly the list its prolog names).
//   Until then the events of that node for the job are held, in order, in
//   the summary (JobSummary::held): stored and acknowledged, not counted.
//   When slurmctld's answer disproves the run, they are dropped: recorded in
//   the event log, never counted.
// - a PrologStarted of the run already known that names other nodes than the
//   job's is refused, however long ago the run ended.
// - a PrologStarted that cannot belong to the job as recorded (its sender
//   ended that run already, or the job is over and the sender was never on
//   it: JobSummary::endedFor) is held too: a new job may have been given the
//   id (MaxJobId wrapped, or slurmctld lost its state). It begins a new
//   record only once slurmctld confirms a job under the id that runs that
//   run on the sender (and on exactly the nodes its list names) and that
//   started after the recorded job's last epilog; the old record is then
//   archived (Settled::archived). A replay of the old job's prolog fails
//   that test: the old job started before its own epilogs.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accel/aggregator/run_checks.h"
#include "accel/aggregator/summary.h"
#include "accel/events/event.h"

namespace accel::aggregator {

enum class Admission {
  kApply,   // merge it into the summary
  kHold,    // keep it in the summary's held events until slurmctld answers
  kRefuse,  // Nack it: the node did not run the job
};

struct Verdict {
  Admission admission = Admission::kApply;
  std::string why;  // kRefuse: the reason, for the Nack and the log
  // kApply of a new run that the answer confirmed: the answer's nodes may
  // report the job from now on.
  bool confirmed_run = false;
  // kApply of the first event of a new job under the id: the summary is
  // archived and begins afresh before the event is merged.
  bool new_job = false;
};

// What to do with `ev` (of the job of `s`) from `node`, the sender's
// authenticated name, received at `received_ns` (CLOCK_REALTIME). `answer`:
// slurmctld's latest word on the job, null when there is none yet. An answer
// confirms a new run whatever its age; it disproves one only when it is no
// older than the event, or when slurmctld has moved past that run.
Verdict admit(const JobSummary& s, const std::string& node, const event::Event& ev,
              int64_t received_ns, const RunAnswer* answer = nullptr);

// Holds an event: appends it to s.held. False (nothing held) when the job
// holds JobSummary::kMaxHeld events or kMaxHeldBytes already.
bool hold(JobSummary& s, const std::string& node, int64_t received_ns,
          std::span<const uint8_t> envelope);

// An event dropped from the held ones: slurmctld did not confirm its run.
struct Dropped {
  std::string node;
  std::string why;
};

struct Settled {
  bool merged = false;           // held events were merged: the summary changed
  std::vector<Dropped> dropped;  // held events that will never count
  int64_t newest_held_ns = 0;    // when the newest event still held arrived; 0: none held
  // A new job under the id was confirmed: the record it replaced (held
  // events cleared), the owner of the new job (its prolog's uid), and when
  // its first held event arrived (its events are those received since).
  std::optional<JobSummary> archived;
  uint32_t new_owner = 0;
  int64_t new_since_ns = 0;
};

// Weighs every held event of `s` against `answer`, in the order they came:
// those of a run it confirms are merged, those it disproves are dropped,
// the others stay held. An envelope that no longer decodes is dropped.
Settled settleHeld(JobSummary& s, const RunAnswer& answer);

}  // namespace accel::aggregator
