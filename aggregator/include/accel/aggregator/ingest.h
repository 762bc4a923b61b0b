#pragma once
// The ingest decision for each received frame, without ZeroMQ: size cap,
// verification, the sender's identity, dedupe, then batching into one
// transaction. An event is accepted only as the next sequence number of its
// (node, epoch) stream; lower ones are duplicates (dropped, re-acknowledged),
// higher ones mean an earlier one was lost on the way (dropped; the agent
// resends from its oldest unacknowledged event).
//
// A frame that is refused (over the size cap, not a valid envelope, or an
// event of a job its node did not run) is answered with a Nack. When its
// header names the sender's own stream and it is that stream's next sequence
// number, the number counts as received (the frame is "skipped": not stored,
// covered by the next Ack), so one bad frame never holds up the frames behind
// it. A frame that names another node than its sender's key moves no stream.
//
// Which node may report what of a job is job_admission.h's: an event of a
// node that did not run the job is refused; one of a new run of a requeued
// job is stored and acknowledged, but held in the job's summary until
// slurmctld confirms the run. The Ingestor asks its RunChecks about the job
// and weighs the held events against each answer in settle(), which the
// ingest thread calls between frames. A job that holds events is listed in
// the store (held_jobs), so that a restarted aggregator asks again.
//
// A job's AdminComment is queued once every node's epilog is in. Until then,
// from the first epilog on, the job waits in summary_waits until
// `summary_wait` after that epilog arrived, when the comment writer queues it
// anyway (Store::releaseWaits); being in the database, the wait outlives a
// restart. Once queued, every later change queues it again.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "accel/aggregator/job_admission.h"
#include "accel/aggregator/metrics.h"
#include "accel/aggregator/run_checks.h"
#include "accel/aggregator/store.h"

namespace accel::aggregator {

inline constexpr std::chrono::seconds kDefaultSummaryWait{300};  // SummaryWaitSeconds

// What became of one offered frame.
struct Offer {
  // The stream to acknowledge to the peer: accepted, duplicate, gap, or
  // refused and skipped. Empty when no stream of the sender can be named.
  std::optional<StreamKey> ack;
  // Set when the frame was refused: the answer to send back (the frame is not stored).
  std::optional<event::Nack> nack;
  uint32_t job_id = 0;  // the refused event's job, 0 if none or unknown (for logs)
  explicit operator bool() const { return !nack; }  // not refused
};

// A held event that will never count, for the daemon's log.
struct Unconfirmed {
  uint32_t job_id = 0;
  std::string node;
  std::string why;
};

class Ingestor {
 public:
  // `runs`: where slurmctld is asked about new runs; null: nobody confirms
  // them, and their events stay held.
  Ingestor(Store& store, Metrics& metrics, size_t max_frame_bytes,
           std::chrono::seconds summary_wait = kDefaultSummaryWait, RunChecks* runs = nullptr);

  // Reads every stream's acknowledged sequence number, and the jobs that
  // hold events, from the store.
  Status load();

  // Weighs held events against the answers that came, and asks again
  // (at most once a second) about the jobs that still hold some. True when
  // a summary changed: the next sealed batch saves it, so the caller should
  // seal one even if no frame comes. Never blocks.
  bool settle(int64_t now_ns);
  // Held events dropped since the last call (at most kKeptUnconfirmed), and
  // in `*more` how many more were.
  static constexpr size_t kKeptUnconfirmed = 64;
  std::vector<Unconfirmed> takeUnconfirmed(uint64_t* more = nullptr);

  // One payload frame from a peer authenticated as `peer_node` (empty: no
  // identity check). Says which stream to acknowledge to that peer and, for
  // a refused frame, the Nack to send it.
  Offer offer(std::string_view peer_node, std::span<const uint8_t> bytes, int64_t now_ns);

  // Writes the open batch in one transaction (seal, Store::commit, finish).
  // On failure nothing of the batch counts as received (the agents will
  // resend it).
  Status commit(int64_t now_ns);
  size_t pending() const { return batch_.events.size(); }
  // Job summaries held in memory (the rest are read from the store when needed).
  size_t cachedJobs() const { return jobs_.size(); }

  // For writing on another thread: closes the open batch and returns it
  // (nullopt when it holds no event). Frames offered afterwards go into a
  // new batch that builds on the sealed one. At most one sealed batch may
  // be unfinished at a time.
  std::optional<Batch> seal(int64_t now_ns);
  // The outcome of writing `batch`, the last one sealed. On success its
  // streams count as committed. On failure it is forgotten together with
  // the open batch built on it, so both will be received again.
  void finish(const Batch& batch, const Status& written);

  Store& store() { return store_; }

  // Highest committed sequence number of a stream (0: none).
  uint64_t acked(const StreamKey& key) const;

 private:
  // What is known of one (node, epoch) stream; found once per frame.
  struct Stream {
    uint64_t committed = 0;  // highest sequence number in the store
    uint64_t staged = 0;     // newest accepted, committed or not
    double lag_s = 0;        // of its newest event in the open batch
    bool in_batch = false;   // the open batch holds events of it
  };
  using Streams = std::map<StreamKey, Stream>;

  Result<JobSummary*> job(uint32_t job_id);
  Offer refuse(std::string_view peer_node, std::span<const uint8_t> bytes, Reject why,
               event::NackReason reason, std::string message);
  Offer skip(Streams::iterator stream, const StreamKey& key, uint64_t seq, event::NackReason reason,
             std::string message);
  Verdict admissionOf(const event::Envelope& env, uint32_t job_id, int64_t now_ns);
  void stage(Streams::iterator stream, uint64_t seq);
  void merge(const event::Envelope& env, uint32_t job_id, int64_t now_ns);
  void holdEvent(const event::Header& header, uint32_t job_id, std::span<const uint8_t> bytes,
                 int64_t now_ns);
  void settleJob(const RunAnswer& answer);
  void noteUnconfirmed(uint32_t job_id, std::string node, std::string why);
  bool affordNodeList(const std::string& node, const event::Event& ev);

  Store& store_;
  Metrics& metrics_;
  size_t max_frame_;
  int64_t summary_wait_ns_;
  Streams streams_;
  std::vector<Streams::iterator> batch_streams_;   // those with in_batch set
  std::unordered_map<uint32_t, JobSummary> jobs_;  // cache; dropped when a commit fails
  std::set<uint32_t> touched_;                     // jobs whose summary changed in the open batch
  std::set<uint32_t> held_touched_;  // jobs whose held events changed, to save (comment not due)
  Batch batch_;
  RunChecks* runs_;
  // Jobs that hold events -> when the newest of them arrived (0: not known,
  // after a restart): the answer wanted is no older than that.
  std::map<uint32_t, int64_t> held_jobs_;
  int64_t last_asks_ns_ = 0;
  std::vector<Unconfirmed> unconfirmed_;
  uint64_t unconfirmed_dropped_ = 0;
  // Node-list names expanded for the open batch, in all and per sending node
  // (affordNodeList); both start again with each batch.
  size_t list_names_ = 0;
  std::unordered_map<std::string, size_t> list_names_by_node_;
  size_t listed_in_cache_ = 0;  // node names of the summaries stored since jobs_ was emptied
};

// The most node-list names one batch expands: in all, and for the lists of one
// sending node (two lists of the largest size). A prolog whose list would go
// past either waits for a later batch (its node sends it again), so one key
// holder's lists cannot hold the ingest thread past the watchdog.
inline constexpr size_t kMaxListNamesPerBatch = 1048576;
inline constexpr size_t kMaxListNamesPerNode = 131072;

}  // namespace accel::aggregator
