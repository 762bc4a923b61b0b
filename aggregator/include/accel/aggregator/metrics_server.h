#pragma once
// A minimal HTTP/1.0 endpoint that answers every request with the metrics
// text. Local scraping only: it reads at most one small request per
// connection and has no other routes.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "accel/aggregator/metrics.h"
#include "accel/common/result.h"

namespace accel::aggregator {

class MetricsServer {
 public:
  // `address` is HOST:PORT with a numeric IPv4 host; port 0 picks a free one.
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& address, const Metrics& metrics);
  ~MetricsServer();
  uint16_t port() const { return port_; }

 private:
  MetricsServer(int fd, uint16_t port, const Metrics& metrics);
  void serve();
  int fd_;
  uint16_t port_;
  const Metrics& metrics_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace accel::aggregator
