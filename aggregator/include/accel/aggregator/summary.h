#pragma once
// One job's record across all of its nodes, merged from their events.
// Merging is order-insensitive where it can be (sets, maxima, the worst
// result), so events of different nodes may arrive interleaved in any order,
// and idempotent per node: a node that reports the same thing twice (a
// resend under a new epoch after its agent restarted) changes nothing.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "accel/aggregator/gpu_progress.h"
#include "accel/aggregator/gpu_summary.h"
#include "accel/aggregator/idle_summary.h"
#include "accel/aggregator/node_lists.h"
#include "accel/aggregator/xid_summary.h"
#include "accel/common/result.h"
#include "accel/events/event.h"

namespace accel::aggregator {

// An event held back until slurmctld confirms the run it belongs to
// (job_admission.h): its sender, when it arrived (CLOCK_REALTIME) and its
// envelope as received (verified then; decoded again when it is weighed).
struct HeldEvent {
  std::string node;
  int64_t received_ns = 0;
  std::vector<uint8_t> envelope;
  bool operator==(const HeldEvent&) const = default;
};

struct JobSummary {
  uint32_t job_id = 0;
  event::JobResult result = event::JobResult::kOk;
  std::string accel_kind;  // "gpu", "ipu", "appliance", "mixed"; empty: none
  // The job's accelerators: every partition device once plus every node's
  // own devices. Recomputed from the two fields below at each prolog result;
  // a state from an earlier release has only this figure.
  uint32_t accel_count = 0;
  std::map<std::string, uint32_t> local_devices;  // node -> devices of that node alone (GPUs)
  std::set<std::string> partition_devices;  // devices of a shared partition ("p42:0"), once each
  std::string partition;
  std::set<std::string> nodes;             // nodes that reported the job
  std::set<std::string> epilog_nodes;      // nodes whose epilog finished
  std::set<std::string> cleanup_failed;    // nodes whose epilog could not release everything
  std::set<std::string> limit_unmeasured;  // nodes that could not measure the job's appliance limit
  uint32_t node_count = 0;                 // from the prolog; 0: unknown
  std::string node_list;  // SLURM_NODELIST from the prolog, as sent; empty: unknown
  // node_list expanded, when it names exactly node_count distinct nodes;
  // otherwise empty and only node_count is used. Derived, not stored.
  std::set<std::string> listed_nodes;
  int64_t first_epilog_ns = 0;  // when the first epilog arrived here; 0: none, or not known
  int64_t last_epilog_ns = 0;   // when the latest epilog arrived here; 0: none, or not known
  // Earlier jobs that had this id (MaxJobId wrapped, or slurmctld lost its
  // state): their summaries are archived, and this one began afresh when
  // slurmctld confirmed that a new job runs under the id (job_admission.h).
  uint32_t instance = 0;
  std::map<std::string, uint64_t>
      appliance_s;  // node -> the job's appliance seconds as that node saw them
  // A requeued job's later runs: runs before the latest (SLURM_JOB_RESTART_COUNT),
  // and for each run from the second on, node -> its appliance seconds there
  // (the first run's are appliance_s). node_run: the run each node reported
  // last, which its appliance updates belong to.
  uint32_t restarts = 0;
  std::map<uint32_t, std::map<std::string, uint64_t>> run_appliance_s;
  std::map<std::string, uint32_t> node_run;
  // node -> the latest run whose epilog that node sent (a state from before
  // this field: node_run's, for the nodes in epilog_nodes).
  std::map<std::string, uint32_t> epilog_run;
  uint64_t appliance_limit_s = 0;
  std::set<uint32_t> surrogate_steps;
  // Nodes named by the list of a later run of the job (requeued onto other
  // nodes after the first run was over): they may report it too.
  std::set<std::string> later_nodes;
  // node -> why its prolog failed (the last failure it reported), each at
  // most kMaxErrorBytes; at most kMaxErrorNodes nodes, those first by name.
  std::map<std::string, std::string> errors;
  // What the job did with its GPUs, per node (from each node's epilog).
  GpuUse gpu;
  // A running job's latest GPU figures per node (GpuProgress events), for
  // `accelctl report`; not part of the comment.
  LiveGpuUse live_gpu;
  // The Xids of the job's GPUs, per node, GPU and code (GpuXid events).
  JobXids xid;
  // Each node's job_idle event: its GPUs all at 0% for the node's IdleAfter.
  IdleNotes idle;
  // Events of a new run that slurmctld has not confirmed yet, and every
  // later event of their senders for the job, in the order they came
  // (job_admission.h). Not part of the comment; stored with the state.
  std::vector<HeldEvent> held;
  bool operator==(const JobSummary&) const = default;

  static constexpr size_t kMaxErrorBytes = 200;
  // Runs told apart: a job requeued more often has its later runs' seconds
  // counted with run kMaxRun's (bounds the state and the comment).
  static constexpr uint32_t kMaxRun = 100;
  static constexpr size_t kMaxErrorNodes = 16;
  // Held events per job: enough for the lifecycle of a run's nodes while
  // slurmctld is slow to answer; past either bound an event is not held.
  static constexpr size_t kMaxHeld = 256;
  static constexpr size_t kMaxHeldBytes = size_t{256} * 1024;

  // The job's appliance seconds: every node reads the one appliance the job
  // used, so each reports the job's whole figure and the largest is taken;
  // a requeued job's runs each have their own budget, and add up.
  uint64_t applianceSeconds() const;
  // The appliance seconds of each run, the first run's first (restarts + 1).
  std::vector<uint64_t> runSeconds() const;
  // Every node's epilog is in: each listed node's, or with no usable list
  // node_count distinct nodes'; with an unknown count, at least one.
  bool complete() const;
  // The nodes of the job: those listed and those that reported, sorted.
  std::set<std::string> allNodes() const;
  // Nodes whose epilog is not in, while the summary is not complete: the
  // listed ones, or without a usable list those that reported something
  // (a node that never reported cannot be named then). Empty when complete.
  std::set<std::string> missingNodes() const;
  // Whether `node` may report the job: it is listed (by the first run's list
  // or, once slurmctld confirmed a later run, by that run's nodes). Without a
  // usable list, the nodes that reported the job's run so far (node_run: its
  // prolog, epilog or appliance use; normally the node that sent the first
  // prolog) may, never any other node; before any node did, any node may.
  bool mayReport(const std::string& node) const;
  // Whether events of `node` are held.
  bool holdsFrom(const std::string& node) const;
  // Whether a prolog of run `run` from `node` cannot belong to this job as
  // it stands: the run is not a later one, and the sender sent its epilog of
  // that run already, or every node's epilog is in and the sender was never
  // on the job. Only a new job under the same id (or a forgery) sends that.
  bool endedFor(const std::string& node, uint32_t run) const;
};

// Folds one event from `node` into `summary` (whose job_id is the event's).
// `received_ns` is when the event arrived (CLOCK_REALTIME); 0: not known.
// False when the event cannot have changed the summary (task events, say),
// so the caller need not store it again.
bool mergeEvent(JobSummary& summary, const std::string& node, const event::Event& ev,
                int64_t received_ns = 0);

// When the job's AdminComment is due (CLOCK_REALTIME ns; the caller writes
// no earlier than now): 0 once complete(); otherwise `wait_ns` after the
// first epilog arrived (at once when that time is not known); nullopt while
// no epilog is in.
std::optional<int64_t> commentDueNs(const JobSummary& summary, int64_t wait_ns);

// The internal state, for the store (round-trips every field; a state
// written by an earlier release, without the newer fields, is read too).
std::string toStateJson(const JobSummary& summary);
Result<JobSummary> fromStateJson(const std::string& text);

// What goes into AdminComment after "accel=": compact JSON with format
// version "v" (docs/accounting-format.md). Never contains '|' (sacct -P's
// separator) or a newline.
std::string toCommentJson(const JobSummary& summary);

}  // namespace accel::aggregator
