#include "accel/ctl/client.h"

#include "accel/ipc/control_socket.h"
#include "accel/schemas/control_generated.h"

namespace accel::ctl {

Result<std::string> configPath(const GlobalOptions& g, const CliIo& io) {
  if (g.config_path) return *g.config_path;
  return defaultConfigPath(io.getenv("SLURM_CONF"), kAccelConfName);
}

Result<AccelConfig> loadConfig(const GlobalOptions& g, const CliIo& io) {
  auto path = configPath(g, io);
  ACCEL_TRY(path);
  return loadAccelConfig(*path);
}

Result<std::vector<uint8_t>> callDaemon(const AccelConfig& config, const std::vector<uint8_t>& request,
                                        std::chrono::milliseconds timeout) {
  auto reply = ipc::call(config.control_socket, request.data(), request.size(), timeout);
  ACCEL_TRY(reply);
  flatbuffers::Verifier v(reply->data(), reply->size());
  if (!v.VerifyBuffer<control::Reply>(nullptr))
    return Error(ErrorCode::kParse, "the daemon's reply failed verification");
  return reply;
}

int exitForCallError(const Error& e) {
  switch (e.code()) {
    case ErrorCode::kUnavailable:
    case ErrorCode::kTimeout:
    case ErrorCode::kNotFound:
      return kUnavailable;
    case ErrorCode::kPermissionDenied:
      return kDenied;
    default:
      return kNodeFault;
  }
}

}  // namespace accel::ctl
