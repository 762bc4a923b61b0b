#include "accel/appliance/csctl_cli.h"

#include <algorithm>
#include <cctype>

namespace accel::appliance {
namespace {

bool transient(const exec::ClientResult& r) {
  if (r.timed_out || r.term_signal != 0) return true;
  std::string text = r.err;
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const char* w : {"connection refused", "unreachable", "unavailable", "timed out", "timeout"})
    if (text.find(w) != std::string::npos) return true;
  return false;
}

Error failure(const std::string& what, const exec::ClientResult& r) {
  ErrorCode code = r.timed_out    ? ErrorCode::kTimeout
                   : transient(r) ? ErrorCode::kUnavailable
                                  : ErrorCode::kIo;
  return Error(code, what + ": " + r.describe());
}

// Runs once, and again after a transient failure.
Result<exec::ClientResult> call(const std::string& program, std::vector<std::string> args,
                                std::chrono::milliseconds timeout) {
  exec::ClientCall c;
  c.argv = {program};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  c.timeout = timeout;
  auto r = exec::runClient(c);
  if (r.ok() && !r->succeeded() && transient(*r)) r = exec::runClient(c);
  return r;
}

}  // namespace

CsctlCli::CsctlCli(std::string program, std::chrono::milliseconds timeout)
    : program_(std::move(program)), timeout_(timeout) {}

Result<std::vector<ApplianceJob>> CsctlCli::jobs() {
  auto r = call(program_, {"get", "jobs", "-o", "json"}, timeout_);
  if (!r.ok()) return r.error().context("csctl get jobs");
  if (!r->succeeded()) return failure("csctl get jobs", *r);
  if (r->truncated) return Error(ErrorCode::kParse, "csctl get jobs: output too large");
  auto jobs = parseCsctlJobs(r->out);
  if (!jobs.ok()) return jobs.error().context("csctl get jobs: malformed output");
  return jobs;
}

Status CsctlCli::cancel(const std::string& id) {
  if (!isValidJobId(id)) return Error(ErrorCode::kInvalidArgument, "bad appliance job id");
  auto r = call(program_, {"cancel", "job", id}, timeout_);
  if (!r.ok()) return r.error().context("csctl cancel job " + id);
  if (r->succeeded()) return okStatus();
  std::string text = r->err + r->out;
  if (text.find("not found") != std::string::npos) return okStatus();
  return failure("csctl cancel job " + id, *r);
}

}  // namespace accel::appliance
