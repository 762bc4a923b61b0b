#pragma once
// The agent's event outbox: publish() spools an event durably-in-order and a
// sender thread owned by the outbox streams the spool to accel-aggregatord
// over ZeroMQ (DEALER, CURVE), releasing events as they are acknowledged.
//
// Wiring in accel-agentd (one outbox per daemon, created after the config is
// read and before the control socket serves):
//   auto outbox = event::Outbox::start(event::outboxOptionsFrom(config, node_name));
//   if (!outbox.ok()) -> log and exit (a broken spool dir is a node fault)
//   (*outbox)->publish(event::AgentStarted{.version = ACCEL_VERSION, .jobs_recovered = n});
//   (*outbox)->stats() -> STATUS= and `accelctl status`.
// Destroying the outbox stops the sender; unacknowledged events stay spooled
// and are replayed by the next start.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "accel/common/config.h"
#include "accel/common/result.h"
#include "accel/events/codec.h"
#include "accel/events/curve_keys.h"
#include "accel/events/spool.h"

namespace accel::event {

struct OutboxOptions {
  std::string node;        // this node's name (as Slurm knows it)
  std::string spool_dir;
  uint64_t spool_max_bytes = kDefaultSpoolMaxBytes;
  std::string endpoint;    // "tcp://host:port" or "ipc:///path"; empty: spool only, never send
  std::string server_public_key;  // Z85 key of the aggregator
  CurveKeyPair client_keys;       // this node's key pair (loadSecretKey)
  // Reconnect back-off: zmq doubles the interval from min up to max.
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{30000};
  // With events in flight and no acknowledgement for this long, the sender
  // starts again from the oldest unacknowledged event (the aggregator drops
  // the duplicates this may produce).
  std::chrono::milliseconds ack_timeout{10000};
  // Group commit: the spool is fdatasync'ed this long after the first append
  // that waits for it, so that the appends in between share the sync. An
  // event is sent only once synced, so this adds to its latency.
  std::chrono::microseconds sync_delay{1000};
};

struct OutboxStats {
  uint64_t epoch = 0;
  uint64_t published = 0;      // publish() calls that stored their event
  uint64_t spooled_bytes = 0;  // bytes on disk not yet released
  uint64_t backlog = 0;        // events stored and not yet acknowledged
  uint64_t sent = 0;           // envelopes handed to zmq (replays count again)
  uint64_t acked = 0;          // events released by acknowledgements
  uint64_t dropped_telemetry = 0;
  uint64_t dropped_lifecycle = 0;  // publish() returned an error for these
  uint64_t recovered = 0;      // events found in the spool at start
  uint64_t recovery_dropped_bytes = 0;
  uint64_t reconnects = 0;     // connections lost
  uint64_t io_errors = 0;      // spool read or sync failures in the sender
  uint64_t syncs = 0;          // fdatasyncs of the spool (appends share them)
  uint64_t slowest_sync_us = 0;  // the longest of them: how long the disk held events back
  bool link_up = false;        // CURVE handshake done, connection alive
};

// One line for STATUS= and logs: "events: link up, backlog 3, sent 120, ...".
std::string describe(const OutboxStats& stats);

class Outbox {
 public:
  // Opens (recovers) the spool, raises the agent epoch, starts the sender.
  // Errors: the spool directory or epoch file cannot be used (kIo, ...), a
  // key is malformed (kInvalidArgument).
  static Result<std::unique_ptr<Outbox>> start(OutboxOptions options);
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Thread-safe; appends to the spool (no fsync, no network) and hands the
  // sync to the syncer thread. A telemetry event that does not fit is dropped and counted
  // (success is returned: dropping it is the policy). A lifecycle event that
  // does not fit, or any write failure, is an error (kUnavailable / kIo) that
  // the caller must report.
  Status publish(const Event& event);

  OutboxStats stats() const;
  uint64_t epoch() const { return epoch_; }
  const std::string& node() const { return options_.node; }

 private:
  class Sender;
  explicit Outbox(OutboxOptions options);

  OutboxOptions options_;
  uint64_t epoch_ = 0;
  std::unique_ptr<Spool> spool_;
  std::mutex publish_mu_;  // seq order == spool order
  uint64_t next_seq_ = 1;
  std::atomic<uint64_t> published_{0}, dropped_telemetry_{0}, dropped_lifecycle_{0};
  std::unique_ptr<Sender> sender_;
};

// Outbox options from accel.conf: AggregatorAddress (unset: events are only
// spooled), AggregatorPublicKeyFile, NodeKeyFile (refused when group or
// others can read it), EventSpoolDir (default StateDir/spool) and
// EventSpoolMaxSize. Errors name the key file at fault.
Result<OutboxOptions> outboxOptionsFrom(const AccelConfig& config, const std::string& node);

}  // namespace accel::event
