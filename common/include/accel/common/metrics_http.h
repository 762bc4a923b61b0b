#pragma once
// The HTTP endpoint Prometheus scrapes: GET /metrics (or /) answers with the
// text a render function makes, in the format the scraper's Accept header
// asks for. Served by libmicrohttpd on a thread of its own; any other path
// is 404, any other method 405. Few connections at a time and a short
// timeout: a client that stalls cannot hold the endpoint.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "accel/common/metrics.h"
#include "accel/common/result.h"

struct MHD_Daemon;

namespace accel::metrics {

class HttpEndpoint {
 public:
  using Render = std::function<std::string(Format)>;
  // `address` is HOST:PORT with a numeric IPv4 host ("127.0.0.1:9464",
  // "0.0.0.0:9464"); port 0 picks a free one (port() says which).
  static Result<std::unique_ptr<HttpEndpoint>> start(const std::string& address, Render render);
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;
  uint16_t port() const { return port_; }
  // Called on libmicrohttpd's thread.
  const Render& render() const { return render_; }

 private:
  explicit HttpEndpoint(Render render) : render_(std::move(render)) {}
  Render render_;
  MHD_Daemon* daemon_ = nullptr;
  uint16_t port_ = 0;
};

// Checks an address for HttpEndpoint::start without binding it (config
// validation): empty when it is usable, otherwise why not.
std::string checkAddress(const std::string& address);

}  // namespace accel::metrics
