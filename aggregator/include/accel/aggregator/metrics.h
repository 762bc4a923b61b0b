#pragma once
// The aggregator's counters, shared by its threads, rendered for Prometheus
// (served on MetricsAddress by metrics::HttpEndpoint).
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "accel/aggregator/store.h"
#include "accel/common/metrics.h"

namespace accel::aggregator {

// Why a frame was refused; append only (the names are metric labels).
enum class Reject {
  kFrames,
  kOversized,
  kInvalid,
  kNodeMismatch,
  kOutOfOrder,
  kUnknownKey,
  kNotOnJob,
  kKeyRevoked,
  kDeferred,      // taken again later (a prolog's node list over the batch's budget)
  kAddressLimit,  // a connection cut when accepted: its source address over its bounds
  kCount
};
const char* rejectName(Reject reason);

// Why libzmq could not accept a connection (accel_aggregator_accept_failures).
enum class AcceptFailure { kEmfile, kEnfile, kOther, kCount };
const char* acceptFailureName(AcceptFailure reason);

struct Metrics {
  std::atomic<uint64_t> events_in{0};  // accepted and committed
  std::atomic<uint64_t> duplicates{0};
  std::array<std::atomic<uint64_t>, size_t(Reject::kCount)> rejected{};
  std::atomic<uint64_t> unknown_kinds{
      0};  // valid envelopes of an event kind this build does not know
  std::atomic<uint64_t> batches{0};
  std::atomic<uint64_t> commit_failures{0};
  std::atomic<uint64_t> comment_writes{0};
  std::atomic<uint64_t> comment_failures{0};
  std::atomic<uint64_t> comment_waits{0};
  std::atomic<int64_t> comments_pending{0};
  std::atomic<int64_t> connections{0};  // transport connections open (accepted, not yet closed)
  // New runs of requeued jobs (job_admission.h): jobs holding events until
  // slurmctld confirms their run, held events dropped because it did not
  // (or for want of room), and lookups slurmctld did not answer.
  std::atomic<int64_t> held_jobs{0};
  std::atomic<uint64_t> runs_unconfirmed{0};
  // Job ids that slurmctld confirmed were given to a new job: the earlier
  // job's summary was archived (job_admission.h).
  std::atomic<uint64_t> reused_job_ids{0};
  std::atomic<uint64_t> slurmctld_failures{0};
  // Accepts that failed, by cause: EMFILE is this process's descriptor limit.
  std::array<std::atomic<uint64_t>, size_t(AcceptFailure::kCount)> accept_failures{};

  void reject(Reject r) { ++rejected[size_t(r)]; }
  // An accept failed with `err` (an errno).
  void acceptFailed(int err);
  // Lag of `node`: receive time minus event time of its latest event.
  void setLag(const std::string& node, double seconds);
  // What a committed batch (or the store, at start) says of a node.
  void noteNode(const std::string& node, const NodeHeard& heard);
  std::string render(metrics::Format format = metrics::Format::kPrometheus) const;
  // Liveness judged at now_ns (CLOCK_REALTIME). The per-node state is copied
  // under the lock and formatted after it is released, so that a scrape of
  // many nodes never holds up ingest (setLag, noteNode).
  std::string render(int64_t now_ns, metrics::Format format = metrics::Format::kPrometheus) const;

  // Called by render() between the copy and the formatting, if set: lets a
  // test check that the lock is free by then. Set before any render.
  std::function<void()> before_format;

 private:
  mutable std::mutex mu_;
  std::map<std::string, double> lag_;
  std::map<std::string, NodeHeard> nodes_;
};

}  // namespace accel::aggregator
