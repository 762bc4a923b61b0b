#pragma once
// Socket settings that both ends of the event stream share.
#include <algorithm>
#include <chrono>
#include <zmq.hpp>

namespace accel::event {

// TCP keepalive on a socket's connections: the first probe after `idle` of
// silence, then every min(idle, 10 s), and the peer given up after three
// unanswered probes. A zero `idle` leaves the system's default.
inline void setTcpKeepalive(zmq::socket_t& socket, std::chrono::seconds idle) {
  if (idle.count() <= 0) return;
  const int secs = static_cast<int>(idle.count());
  socket.set(zmq::sockopt::tcp_keepalive, 1);
  socket.set(zmq::sockopt::tcp_keepalive_idle, secs);
  socket.set(zmq::sockopt::tcp_keepalive_intvl, std::min(secs, 10));
  socket.set(zmq::sockopt::tcp_keepalive_cnt, 3);
}

}  // namespace accel::event
