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

#include "accel/aggregator/metrics.h"
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

class Ingestor {
 public:
  Ingestor(Store& store, Metrics& metrics, size_t max_frame_bytes,
           std::chrono::seconds summary_wait = kDefaultSummaryWait);

  // Reads every stream's acknowledged sequence number from the store.
  Status load();

  // One payload frame from a peer authenticated as `peer_node` (empty: no
  // identity check). Says which stream to acknowledge to that peer and, for
  // a refused frame, the Nack to send it.
  Offer offer(std::string_view peer_node, std::span<const uint8_t> bytes, int64_t now_ns);

  // Writes the open batch in one transaction (seal, Store::commit, finish).
  // On failure nothing of the batch counts as received (the agents will
  // resend it).
  Status commit(int64_t now_ns);
  size_t pending() const { return batch_.events.size(); }

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
  std::optional<std::string> refusalOf(const event::Envelope& env, uint32_t job_id, int64_t now_ns);
  void stage(Streams::iterator stream, uint64_t seq);
  void merge(const event::Envelope& env, uint32_t job_id, int64_t now_ns);

  Store& store_;
  Metrics& metrics_;
  size_t max_frame_;
  int64_t summary_wait_ns_;
  Streams streams_;
  std::vector<Streams::iterator> batch_streams_;   // those with in_batch set
  std::unordered_map<uint32_t, JobSummary> jobs_;  // cache; dropped when a commit fails
  std::set<uint32_t> touched_;                     // jobs whose summary changed in the open batch
  Batch batch_;
};

}  // namespace accel::aggregator
