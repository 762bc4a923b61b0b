#include "accel/spank/daemon_client.h"

#include "accel/ipc/control_socket.h"

namespace accel::spank {

Result<DaemonReply> callDaemon(const std::string& socket_path,
                               const std::vector<std::uint8_t>& request,
                               std::chrono::milliseconds timeout) {
  auto bytes = ipc::call(socket_path, request.data(), request.size(), timeout);
  ACCEL_TRY(bytes);
  return decodeReply(*bytes);
}

}  // namespace accel::spank
