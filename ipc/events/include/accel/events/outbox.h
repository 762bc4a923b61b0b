#pragma once
// The agent's event outbox: publish() spools an event durably-in-order and a
// sender thread owned by the outbox streams the spool to accel-aggregatord
// over ZeroMQ (DEALER, CURVE), releasing events as they are acknowledged.
//
// Wiring in accel-agentd (one outbox per daemon, created after the config is
// read and before the control socket serves):
//   auto outbox = event::Outbox::start(options);  // agentd::outboxOptionsFrom(config, node)
//   if (!outbox.ok()) -> log and exit (a broken spool dir is a node fault)
//   (*outbox)->publish(event::AgentStarted{.version = ACCEL_VERSION, .jobs_recovered = n});
//   (*outbox)->stats() -> STATUS= and `accelctl status`.
// Destroying the outbox stops the sender; unacknowledged events stay spooled
// and are replayed by the next start. Lifecycle events still held in memory
// for want of spool space are lost then: call shutdown() and log its stats.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "accel/common/result.h"
#include "accel/events/codec.h"
#include "accel/events/curve_keys.h"
#include "accel/events/spool.h"

namespace accel::event {

// A lifecycle event the spool cannot take (its size bound is reached, or the
// disk is full) waits in memory, in publish order, until an append succeeds;
// beyond these bounds further lifecycle events are lost (and counted).
inline constexpr uint64_t kMaxHeldEvents = 100000;
inline constexpr uint64_t kMaxHeldBytes = 64ull << 20;  // encoded envelope bytes

struct OutboxOptions {
  std::string node;  // this node's name (as Slurm knows it)
  std::string spool_dir;
  uint64_t spool_max_bytes = kDefaultSpoolMaxBytes;
  std::string endpoint;  // "tcp://host:port" or "ipc:///path"; empty: spool only, never send
  std::string server_public_key;  // Z85 key of the aggregator
  CurveKeyPair client_keys;       // this node's key pair (loadSecretKey)
  // The link to the aggregator. After a lost link or a failed attempt the
  // outbox waits (ReconnectBackoff: random, bound doubling from min to max),
  // then makes a new socket; zmq's own reconnect is off. An attempt that has
  // not finished its CURVE handshake after attempt_timeout has failed.
  std::chrono::milliseconds reconnect_min{500};
  std::chrono::milliseconds reconnect_max{30000};
  std::chrono::milliseconds attempt_timeout{20000};
  // ZMTP heartbeats: a PING every ping_interval (0: none); a link on which
  // nothing came for ping_timeout after one is closed. TCP keepalive probes after tcp_keepalive
  // idle (0: the system's default); both only for tcp:// endpoints' sake, harmless on ipc://.
  std::chrono::milliseconds ping_interval{10000};
  std::chrono::milliseconds ping_timeout{30000};
  std::chrono::seconds tcp_keepalive{60};
  // With events in flight and no acknowledgement for this long, the sender
  // starts again from the oldest unacknowledged event (the aggregator drops
  // the duplicates this may produce).
  std::chrono::milliseconds ack_timeout{10000};
  // Group commit: the spool is fdatasync'ed this long after the first append
  // that waits for it, so that the appends in between share the sync. An
  // event is sent only once synced, so this adds to its latency.
  std::chrono::microseconds sync_delay{1000};
  // Held lifecycle events: the bounds, and how often a thread retries their
  // appends while any are held (publish() retries too; none held: no wake-ups).
  uint64_t held_max_events = kMaxHeldEvents;
  uint64_t held_max_bytes = kMaxHeldBytes;
  std::chrono::milliseconds held_retry{1000};
  // Called on the sender thread for each frame the aggregator refused (a
  // Nack), for the caller's log; must not block. A refused frame that the
  // aggregator skipped is never sent again: the next Ack releases it.
  std::function<void(const Nack&)> on_refused;
};

struct OutboxStats {
  uint64_t epoch = 0;
  uint64_t published = 0;      // events appended to the spool (held ones once appended)
  uint64_t spooled_bytes = 0;  // bytes on disk not yet released
  uint64_t backlog = 0;        // events stored and not yet acknowledged
  uint64_t sent = 0;           // envelopes handed to zmq (replays count again)
  uint64_t acked = 0;          // events released by acknowledgements
  uint64_t dropped_telemetry = 0;
  uint64_t dropped_lifecycle = 0;  // lost: the hold was full, or still held at shutdown
  uint64_t held = 0;               // lifecycle events waiting in memory for spool space
  uint64_t held_bytes = 0;
  uint64_t held_total = 0;        // lifecycle events that ever had to wait
  uint64_t lost_at_shutdown = 0;  // of dropped_lifecycle: held when the outbox stopped
  uint64_t recovered = 0;         // events found in the spool at start
  uint64_t recovery_dropped_bytes = 0;
  uint64_t reconnects = 0;       // connections lost
  uint64_t attempts = 0;         // connection attempts made (the first one included)
  uint64_t io_errors = 0;        // spool read or sync failures in the sender
  uint64_t refused = 0;          // frames the aggregator refused (Nack)
  uint64_t syncs = 0;            // fdatasyncs of the spool (appends share them)
  uint64_t slowest_sync_us = 0;  // the longest of them: how long the disk held events back
  bool link_up = false;          // CURVE handshake done, connection alive
};

// One line for STATUS= and logs: "events: link up, backlog 3, sent 120, ...",
// with the held lifecycle events and the losses when there are any.
std::string describe(const OutboxStats& stats);

class Outbox {
 public:
  // Opens (recovers) the spool, raises the agent epoch, starts the sender.
  // Errors: the spool directory or epoch file cannot be used (kIo, ...), a
  // key is malformed (kInvalidArgument).
  static Result<std::unique_ptr<Outbox>> start(OutboxOptions options);
  // Stops the threads; held events get one last append attempt, those that
  // still do not fit are lost (counted in dropped_lifecycle and
  // lost_at_shutdown). Returns the final stats for the caller to log.
  // Idempotent; the destructor calls it. Not while a publish() runs; one
  // that comes afterwards is refused (kUnavailable).
  OutboxStats shutdown();
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Thread-safe; appends to the spool (no fsync, no network) and hands the
  // sync to the syncer thread. The sequence number is given at the append.
  // A telemetry event that cannot be appended (spool full, write failure) is
  // dropped and counted: success is returned, dropping it is the policy. A
  // lifecycle event that cannot be appended, or that comes while others are
  // held, is held in memory (success). Errors: the event is too large to send
  // (kInvalidArgument); a lifecycle event is lost because the hold is full or
  // the outbox was shut down (kUnavailable), which the caller must report.
  Status publish(const Event& event);

  OutboxStats stats() const;
  uint64_t epoch() const { return epoch_; }
  const std::string& node() const { return options_.node; }

 private:
  class Sender;
  struct Held {
    Event event;
    Header header;  // seq is set when it is appended
    uint64_t bytes = 0;
  };
  explicit Outbox(OutboxOptions options);
  Result<Appended> appendLocked(const Header& header, Priority priority,
                                const std::vector<uint8_t>& bytes);
  Status holdLocked(const Event& event, const Header& header, uint64_t bytes);
  void drainHeldLocked();
  void retryLoop();
  void stop();

  OutboxOptions options_;
  uint64_t epoch_ = 0;
  std::unique_ptr<Spool> spool_;
  std::mutex publish_mu_;  // seq order == spool order; guards the members up to retry_cv_
  uint64_t next_seq_ = 1;
  std::deque<Held> held_;
  uint64_t held_bytes_ = 0;
  bool stopped_ = false;
  std::condition_variable retry_cv_;
  std::atomic<uint64_t> published_{0}, dropped_telemetry_{0}, dropped_lifecycle_{0};
  std::atomic<uint64_t> held_count_{0}, held_bytes_stat_{0}, held_total_{0}, lost_at_shutdown_{0};
  std::unique_ptr<Sender> sender_;
  std::thread retry_thread_;
};

}  // namespace accel::event
