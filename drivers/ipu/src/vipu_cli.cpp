#include "accel/ipu/vipu_cli.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <thread>

#include "accel/ipu/vipu_outcome.h"

namespace accel::ipu {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Status checkFile(const std::string& key, const std::optional<std::string>& path, bool secret) {
  if (!path || path->empty()) return Error(ErrorCode::kInvalidArgument, key + " is not set");
  struct stat st {};
  if (::stat(path->c_str(), &st) != 0) return sysError(key + " " + *path, errno);
  if (!S_ISREG(st.st_mode))
    return Error(ErrorCode::kInvalidArgument, key + " " + *path + " is not a regular file");
  if (secret && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Error(
        ErrorCode::kPermissionDenied,
        key + " " + *path + " can be read by other users (mode " + mode + "); make it 0600");
  }
  return okStatus();
}

Error failure(const std::string& what, const exec::ClientResult& r, VipuOutcome outcome) {
  ErrorCode code = ErrorCode::kIo;
  switch (outcome) {
    case VipuOutcome::kExists:
      code = ErrorCode::kConflict;
      break;
    case VipuOutcome::kNotFound:
      code = ErrorCode::kNotFound;
      break;
    case VipuOutcome::kBadRequest:
      code = ErrorCode::kInvalidArgument;
      break;
    case VipuOutcome::kTransient:
      code = r.timed_out ? ErrorCode::kTimeout : ErrorCode::kUnavailable;
      break;
    default:
      break;
  }
  return Error(code, what + ": " + r.describe());
}

}  // namespace

VipuCli::VipuCli(VipuConfig config, std::string program, exec::RetryPolicy retry)
    : config_(std::move(config)), program_(std::move(program)), retry_(retry) {}

std::string VipuCli::describe() const {
  return "vipu controller " + config_.api_host + ":" + std::to_string(config_.api_port);
}

Status VipuCli::checkSecureFiles(const VipuConfig& c) {
  if (!c.is_secure) return okStatus();
  if (!c.api_user || c.api_user->empty())
    return Error(ErrorCode::kInvalidArgument, "ApiUser is not set");
  if (!c.api_access_key || c.api_access_key->empty())
    return Error(ErrorCode::kInvalidArgument, "ApiAccessKey is not set");
  ACCEL_TRY(checkFile("ClientCertFile", c.client_cert_file, false));
  ACCEL_TRY(checkFile("ClientKeyFile", c.client_key_file, true));
  ACCEL_TRY(checkFile("ServerCertFile", c.server_cert_file, false));
  return okStatus();
}

std::vector<std::string> VipuCli::command(std::vector<std::string> args) const {
  std::vector<std::string> argv = {program_, "--api-host", config_.api_host, "--api-port",
                                   std::to_string(config_.api_port)};
  if (config_.is_secure) {
    argv.insert(argv.end(), {"--api-user", config_.api_user.value_or(""), "--api-client-cert",
                             config_.client_cert_file.value_or(""), "--api-client-key",
                             config_.client_key_file.value_or(""), "--api-server-cert",
                             config_.server_cert_file.value_or("")});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

Result<exec::ClientResult> VipuCli::run(const std::vector<std::string>& args,
                                        bool accept_not_found) {
  exec::ClientCall call;
  call.argv = command(args);
  // The access key travels in the environment, which only root and the
  // client itself can read, never on the command line that `ps` shows.
  if (config_.is_secure) {
    call.env.emplace_back("VIPU_CLI_API_ACCESS_KEY", config_.api_access_key.value_or(""));
    call.secrets.push_back(config_.api_access_key.value_or(""));
  }
  auto deadline = Clock::now() + retry_.budget;
  milliseconds backoff = retry_.backoff;
  std::string what = "vipu " + args[0] + " " + args[1] + (args.size() > 2 ? " " + args[2] : "");
  for (int attempt = 1;; ++attempt) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) left = milliseconds(1);
    call.timeout = left;
    auto r = exec::runClient(call);
    if (!r.ok()) return r.error().context(what);
    VipuOutcome outcome = classifyVipu(*r);
    if (outcome == VipuOutcome::kOk) return r;
    if (outcome == VipuOutcome::kNotFound && accept_not_found) return r;
    bool last = attempt >= retry_.attempts || Clock::now() + backoff >= deadline;
    if (outcome != VipuOutcome::kTransient || last) {
      std::string tries = attempt > 1 ? " (after " + std::to_string(attempt) + " attempts)" : "";
      return failure(what + tries, *r, outcome);
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, retry_.max_backoff);
  }
}

Status VipuCli::create(const PartitionSpec& spec) {
  std::vector<std::string> args = {"create",
                                   "partition",
                                   spec.name,
                                   "--size",
                                   std::to_string(spec.ipus),
                                   "--num-gcds",
                                   std::to_string(spec.gcds)};
  if (spec.replicas > 0) args.insert(args.end(), {"--num-replicas", std::to_string(spec.replicas)});
  auto r = run(args, false);
  if (!r.ok()) return r.error();
  return okStatus();
}

Status VipuCli::remove(const std::string& name) {
  auto r = run({"remove", "partition", name}, true);
  if (!r.ok()) return r.error();
  return okStatus();
}

Result<std::vector<GcdConfig>> VipuCli::ipuofConfigs(const std::string& name) {
  // Malformed output is retried like a transient failure: one bad answer from
  // a busy controller should not fail a job.
  auto deadline = Clock::now() + retry_.budget;
  Error last(ErrorCode::kInternal, "no attempt");
  for (int attempt = 1; attempt <= retry_.attempts && Clock::now() < deadline; ++attempt) {
    auto r = run({"get", "partition", name, "--ipu-configs"}, false);
    if (!r.ok()) return r.error();
    auto parsed = parseIpuConfigs(r->out, name);
    if (parsed.ok()) return parsed;
    last = parsed.error().context("vipu get partition " + name + ": malformed output");
  }
  return last;
}

}  // namespace accel::ipu
