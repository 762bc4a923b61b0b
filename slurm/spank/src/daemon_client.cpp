#include "accel/spank/daemon_client.h"

#include <algorithm>
#include <thread>

#include "accel/ipc/control_socket.h"

namespace accel::spank {
namespace {

using Clock = std::chrono::steady_clock;

Result<DaemonReply> callOnce(const std::string& socket_path,
                             const std::vector<std::uint8_t>& request,
                             std::chrono::milliseconds timeout) {
  auto bytes = ipc::call(socket_path, request.data(), request.size(), timeout);
  ACCEL_TRY(bytes);
  return decodeReply(*bytes);
}

}  // namespace

Result<DaemonReply> callDaemon(const std::string& socket_path,
                               const std::vector<std::uint8_t>& request,
                               std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto reply = callOnce(socket_path, request, std::max(left, std::chrono::milliseconds(1)));
    const bool busy =
        reply.ok() ? reply->outcome == Outcome::kBusy : ipc::worthRetrying(reply.error());
    if (!busy || Clock::now() + pause >= deadline) return reply;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

}  // namespace accel::spank
