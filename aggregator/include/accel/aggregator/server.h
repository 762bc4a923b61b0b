#pragma once
// The aggregator's network side: a ROUTER socket with CURVE, a ZAP handler
// that admits only the node keys in the allow-list directory (one NODE.pub
// per node; the file name is the node's name and must match the node name in
// every envelope it sends), and the receive -> ingest -> commit -> ack loop.
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
  size_t batch_max = 4096;  // frames per transaction
};

class Server {
 public:
  // Binds the socket and starts the ZAP handler. `ingestor` must be loaded.
  static Result<std::unique_ptr<Server>> start(const ServerOptions& options, Ingestor& ingestor, Metrics& metrics);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Waits up to `wait` for frames, then ingests what has arrived (up to
  // batch_max), commits it and sends the acknowledgements. An error means the
  // commit failed; nothing of that batch was acknowledged.
  Status poll(std::chrono::milliseconds wait);

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accel::aggregator
