#pragma once
// The aggregator's network side: a ROUTER socket with CURVE, a ZAP handler
// that admits only the node keys in the allow-list directory (one NODE.pub
// per node; the file name is the node's name and must match the node name in
// every envelope it sends), and the receive -> ingest -> commit -> ack loop,
// with commits on a writer thread.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "accel/aggregator/ingest.h"
#include "accel/aggregator/metrics.h"
#include "accel/common/result.h"
#include "accel/events/curve_keys.h"

namespace accel::aggregator {

struct ServerOptions {
  std::string listen;  // zmq endpoint: "tcp://*:7450", "ipc:///run/x.sock"
  event::CurveKeyPair keys;
  std::string allow_dir;  // read again at every handshake, so adding a node needs no restart
  size_t max_frame_bytes = 64 * 1024;
  size_t batch_max = 8192;  // frames per transaction
  // How long a batch stays open for more frames after its first one: fewer,
  // larger commits under load, at most this much added acknowledgement delay.
  std::chrono::milliseconds batch_wait{5};
};

class Server {
 public:
  // Binds the socket and starts the ZAP handler. `ingestor` must be loaded.
  static Result<std::unique_ptr<Server>> start(const ServerOptions& options, Ingestor& ingestor, Metrics& metrics);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // One round of the loop; call it repeatedly. Waits up to `wait` for work,
  // then: sends the acknowledgements of the batch the writer thread has
  // committed (BatchWriter), takes in arrived frames (at most batch_max per
  // batch), and hands the open batch to the writer once it is full or
  // batch_wait old and the writer is free. So a batch is written while the
  // next one is received. An error means a commit failed; nothing of that
  // batch, nor of the one received meanwhile, was acknowledged.
  // Destroying the server waits for the batch being written.
  Status poll(std::chrono::milliseconds wait);

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accel::aggregator
