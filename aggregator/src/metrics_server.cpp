#include "accel/aggregator/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace accel::aggregator {

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& address, const Metrics& metrics) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return Error(ErrorCode::kInvalidArgument, "metrics address needs HOST:PORT");
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  unsigned long port = std::strtoul(address.c_str() + colon + 1, nullptr, 10);
  if (port > 65535 || inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr) != 1)
    return Error(ErrorCode::kInvalidArgument, "metrics address '" + address + "' is not IPv4 HOST:PORT");
  sa.sin_port = htons(static_cast<uint16_t>(port));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return sysError("metrics socket", errno);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t len = sizeof sa;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    int err = errno;
    ::close(fd);
    return sysError("metrics listen on " + address, err);
  }
  return std::unique_ptr<MetricsServer>(new MetricsServer(fd, ntohs(sa.sin_port), metrics));
}

MetricsServer::MetricsServer(int fd, uint16_t port, const Metrics& metrics)
    : fd_(fd), port_(port), metrics_(metrics), thread_([this] { serve(); }) {}

MetricsServer::~MetricsServer() {
  stop_ = true;
  thread_.join();
  ::close(fd_);
}

void MetricsServer::serve() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    // Read what the client sent (bounded in size and time), then answer.
    pollfd in{c, POLLIN, 0};
    char buf[4096];
    if (::poll(&in, 1, 1000) > 0) (void)!::read(c, buf, sizeof buf);
    std::string body = metrics_.render();
    std::string head = "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
    std::string all = head + body;
    (void)!::send(c, all.data(), all.size(), MSG_NOSIGNAL);
    ::close(c);
  }
}

}  // namespace accel::aggregator
