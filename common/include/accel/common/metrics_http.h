#pragma once
// The HTTP endpoint Prometheus scrapes: GET /metrics (or /) answers with the
// text a render function makes, in the format the scraper's Accept header
// asks for. Served by libmicrohttpd on a thread of its own; any other path
// is 404, any other method 405. Every answer closes its connection.
//
// A client that holds connections open without finishing its request
// (slowloris) cannot keep a scraper out:
// - each connection has a deadline, from its accept to its answer sent,
//   however steadily the client trickles bytes; past it the socket is shut;
// - one source holds at most `per_source` connections. A source is a
//   peer's address, except on the node itself: a local user can pick any of
//   the node's addresses (all of 127/8 among them), so a connection from one
//   of them counts for the user that owns the connecting socket, as the
//   kernel's socket diagnostics say. A Prometheus on the same host as a user
//   is then a source of its own. A newcomer from a source at its limit shuts
//   that source's oldest connection rather than being refused;
// - at `connections` in all, a newcomer shuts the oldest connection of any
//   source.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "accel/common/metrics.h"
#include "accel/common/result.h"

struct MHD_Daemon;

namespace accel::metrics {

struct HttpLimits {
  unsigned connections = 64;                 // open at once, every source together
  unsigned per_source = 8;                   // open at once from one source address
  std::chrono::milliseconds deadline{5000};  // from accept to the answer sent
  // Connections from the node's own addresses count by their owner. Only
  // tests turn this off, to stand for other hosts with loopback addresses.
  bool local_by_owner = true;
};

class HttpEndpoint {
 public:
  using Render = std::function<std::string(Format)>;
  // `address` is HOST:PORT with a numeric IPv4 host ("127.0.0.1:9464",
  // "0.0.0.0:9464"); port 0 picks a free one (port() says which). Limits
  // that cannot work (zero, or per_source above connections) are an error.
  static Result<std::unique_ptr<HttpEndpoint>> start(const std::string& address, Render render,
                                                     HttpLimits limits = {});
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;
  uint16_t port() const { return port_; }
  // Called on libmicrohttpd's thread.
  const Render& render() const { return render_; }

  // The connections' bookkeeping (defined in metrics_http.cpp), shared by
  // libmicrohttpd's thread and the thread that enforces the deadline.
  class Guard;

 private:
  explicit HttpEndpoint(Render render);
  Render render_;
  std::unique_ptr<Guard> guard_;
  MHD_Daemon* daemon_ = nullptr;
  uint16_t port_ = 0;
};

// Checks an address for HttpEndpoint::start without binding it (config
// validation): empty when it is usable, otherwise why not.
std::string checkAddress(const std::string& address);

}  // namespace accel::metrics
