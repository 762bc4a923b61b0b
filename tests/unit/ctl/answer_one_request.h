#pragma once
// A thread that plays the daemon for one request: it waits (at most 5 s) for a
// connection on `listener`, answers its one request with the real request
// handler and `ctx`, as root, and ends. The caller runs accelctl meanwhile and
// joins the thread after it.
#include <poll.h>

#include <chrono>
#include <thread>

#include "accel/agentd/control_handler.h"
#include "accel/ipc/control_socket.h"

namespace accel::test {

template <typename Listener>
std::thread answerOneRequest(Listener& listener, agentd::HandlerContext& ctx) {
  return std::thread([&listener, &ctx] {
    pollfd p{listener.fd(), POLLIN, 0};
    if (poll(&p, 1, 5000) != 1) return;
    auto conn = ipc::acceptControl(listener);
    if (!conn.ok()) return;
    auto req = ipc::recvMessage(*conn, std::chrono::seconds(5));
    if (!req.ok()) return;
    auto reply = agentd::handleRequest(ctx, agentd::Caller{0, 1}, *req);
    (void)ipc::sendMessage(*conn, reply.data(), reply.size(), std::chrono::seconds(5));
  });
}

}  // namespace accel::test
