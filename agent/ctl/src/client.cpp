#include "accel/ctl/client.h"

#include <algorithm>
#include <thread>

#include "accel/ctl/hints.h"
#include "accel/ipc/control_socket.h"
#include "accel/ipc/control_verify.h"
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

// The admin socket when this caller may use it (root, SlurmUser), else the
// public one: connecting to the admin socket fails at once for others
// (EACCES), and for an agent older than it (ENOENT).
Result<ipc::Socket> connectDaemon(const AccelConfig& config) {
  auto admin = ipc::connectControl(adminSocketPath(config));
  if (admin.ok()) return admin;
  return ipc::connectControl(config.control_socket);
}

namespace {

using Clock = std::chrono::steady_clock;

Result<std::vector<uint8_t>> callOnce(const AccelConfig& config,
                                      const std::vector<uint8_t>& request,
                                      std::chrono::milliseconds timeout) {
  auto conn = connectDaemon(config);
  ACCEL_TRY(conn);
  auto reply = ipc::call(*conn, request.data(), request.size(), timeout);
  ACCEL_TRY(reply);
  if (!ipc::verifyReply(*reply).ok())
    return Error(ErrorCode::kParse, "the daemon's reply failed verification");
  return reply;
}

bool isBusy(const Result<std::vector<uint8_t>>& reply) {
  if (!reply.ok()) return ipc::worthRetrying(reply.error());
  return flatbuffers::GetRoot<control::Reply>(reply->data())->outcome() == control::Outcome::Busy;
}

}  // namespace

Result<std::vector<uint8_t>> callDaemon(const AccelConfig& config,
                                        const std::vector<uint8_t>& request,
                                        std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto reply = callOnce(config, request, std::max(left, std::chrono::milliseconds(1)));
    if (!isBusy(reply) || Clock::now() + pause >= deadline) return reply;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

int exitForOutcome(uint8_t outcome) {
  switch (static_cast<control::Outcome>(outcome)) {
    case control::Outcome::Ok:
      return kOk;
    case control::Outcome::NotFound:
      return kNotFound;
    case control::Outcome::PermissionDenied:
      return kDenied;
    case control::Outcome::Busy:
      return kUnavailable;
    case control::Outcome::BadRequest:
      return kUsage;
    default:
      return kNodeFault;
  }
}

std::optional<ipc::Socket> sendToAgent(const GlobalOptions& g, const CliIo& io,
                                       const std::string& verb, const std::vector<uint8_t>& request,
                                       int* code) {
  auto path = configPath(g, io);
  auto config = path.ok() ? loadAccelConfig(*path) : Result<AccelConfig>(path.error());
  if (!config.ok()) {
    io.err("accelctl: " + configErrorHint(config.error()));
    *code = kUsage;
    return std::nullopt;
  }
  auto conn = connectDaemon(*config);
  if (!conn.ok()) {
    io.err("accelctl: " + callErrorHint(conn.error(), config->control_socket, *path));
    *code = exitForCallError(conn.error());
    return std::nullopt;
  }
  if (auto sent = ipc::sendMessage(*conn, request.data(), request.size(), std::chrono::seconds(2));
      !sent.ok()) {
    io.err("accelctl: " + verb + ": " + sent.error().message());
    *code = exitForCallError(sent.error());
    return std::nullopt;
  }
  return std::move(*conn);
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
