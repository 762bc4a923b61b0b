#pragma once
// The aggregator's network side: a ROUTER socket with CURVE, a ZAP handler
// that admits only the node keys in the allow-list directory (one NODE.pub
// per node; the file name is the node's name and must match the node name in
// every envelope it sends), and the receive -> ingest -> commit -> ack loop,
// with commits on a writer thread. A refused frame is answered at once with
// a Nack (ingest.h says when its sequence number counts as received).
//
// The allow list is read when the server starts and again by
// reloadAllowList() (the daemon calls it on SIGHUP), never per handshake. A
// reload that fails keeps the list in force. A key taken off the list is
// refused at its next handshake, and so is every frame still arriving on a
// connection made with it (Nack, key no longer allowed).
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "accel/aggregator/allow_list.h"
#include "accel/aggregator/ingest.h"
#include "accel/aggregator/metrics.h"
#include "accel/common/result.h"
#include "accel/events/curve_keys.h"

namespace accel::aggregator {

struct ServerOptions {
  std::string listen;  // zmq endpoint: "tcp://*:7450", "ipc:///run/x.sock"
  event::CurveKeyPair keys;
  std::string allow_dir;  // read at start and by reloadAllowList()
  size_t max_frame_bytes = size_t{64} * 1024;
  size_t batch_max = 8192;  // frames per transaction
  // How long a batch stays open for more frames after its first one: fewer,
  // larger commits under load, at most this much added acknowledgement delay.
  std::chrono::milliseconds batch_wait{5};
  // Links: a ZMTP PING to each node every ping_interval (0: none), a link
  // silent for ping_timeout after one is closed; TCP keepalive probes after
  // tcp_keepalive idle (0: the system's default).
  std::chrono::milliseconds ping_interval{0};
  std::chrono::milliseconds ping_timeout{90000};
  std::chrono::seconds tcp_keepalive{60};
  // Questions about recorded events (event_queries.h) on this endpoint, with
  // the same keys and allow list; empty: none are answered. `database` is
  // the store's file, which the questions' thread opens read-only.
  std::string query_listen{};
  std::string database{};
  std::chrono::milliseconds query_hold{20000};  // QueryOptions::hold_timeout
  // Before a peer is authenticated (docs/security.md): a CURVE handshake not
  // finished within handshake_timeout is dropped (ZMQ_HANDSHAKE_IVL);
  // io_threads serve the nodes' links, while the events queries get a context
  // of their own with one thread; per_address bounds, for each TCP source
  // address, the connections it holds open and those it opens within one
  // second (0: no bound). A connection over either bound is cut as soon as it
  // is accepted. An address whose keys the ZAP handler refused
  // kRefusalsToBar times within kRefusalWindow, or that opened more than
  // per_address connections in a second, is barred for kBarTime: each of its
  // connections is cut when accepted, before it costs more handshakes.
  std::chrono::milliseconds handshake_timeout{3000};
  int io_threads = 2;
  size_t per_address = 16;
};

// A refused frame, for the daemon's log.
struct Rejection {
  std::string peer;  // the sender's node name (its key's), empty if none
  event::Nack nack;  // what it was told
  uint32_t job_id = 0;
};

class Server {
 public:
  static constexpr int kRefusalsToBar = 3;
  static constexpr std::chrono::seconds kRefusalWindow{10};
  static constexpr std::chrono::seconds kBarTime{30};

  // Loads the allow list (loadAllowList, owned by root or this process's
  // user), binds the socket and starts the ZAP handler. `ingestor` must be
  // loaded. Errors: the allow list is refused (naming the file), the bind failed.
  static Result<std::unique_ptr<Server>> start(const ServerOptions& options, Ingestor& ingestor,
                                               Metrics& metrics);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // One round of the loop; call it repeatedly. Waits up to `wait` for work,
  // then: sends the acknowledgements of the batch the writer thread has
  // committed (BatchWriter), takes in arrived frames (at most batch_max per
  // batch), weighs held runs against slurmctld's answers (Ingestor::settle),
  // and hands the open batch to the writer once it is full or batch_wait old
  // and the writer is free. So a batch is written while the
  // next one is received. An error means a commit failed; nothing of that
  // batch, nor of the one received meanwhile, was acknowledged.
  // Destroying the server waits for the batch being written.
  Status poll(std::chrono::milliseconds wait);

  // Reads the allow list again and puts it in force; on the thread that
  // calls poll(). Returns how many nodes it lists. On error the list in force
  // stays.
  Result<size_t> reloadAllowList();

  // The frames refused since the last call, oldest first, at most
  // kKeptRejections; `*more` (if given) gets how many more were refused.
  static constexpr size_t kKeptRejections = 64;
  std::vector<Rejection> takeRejections(uint64_t* more = nullptr);

  // The endpoint the node socket is bound to (with the port the system
  // chose for "tcp://HOST:*").
  std::string endpoint() const;

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accel::aggregator
