#include "accel/agentd/earlier_runs.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "accel/exec/client_process.h"
#include "accel/ipc/admin_comment.h"

namespace accel::agentd {
namespace {

// More than any Slurm time limit (2^31 s), so the product stays in range.
constexpr uint64_t kMaxSeconds = uint64_t{1} << 32;

}  // namespace

Result<int64_t> earlierRunsUsedNs(std::string_view sacct_output) {
  int64_t best = -1;
  while (!sacct_output.empty()) {
    const size_t end = sacct_output.find('\n');
    std::string_view line = sacct_output.substr(0, end);
    sacct_output =
        end == std::string_view::npos ? std::string_view() : sacct_output.substr(end + 1);
    const std::string segment = ipc::extractAccelSegment(line);
    if (segment.empty()) continue;
    auto j = nlohmann::json::parse(segment, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) continue;
    auto it = j.find("appliance_s");
    if (it == j.end() || !it->is_number_unsigned()) continue;
    const uint64_t s = std::min(it->get<uint64_t>(), kMaxSeconds);
    best = std::max(best, static_cast<int64_t>(s) * 1'000'000'000);
  }
  if (best < 0)
    return Error(ErrorCode::kNotFound, "no summary of the job's earlier runs in accounting yet");
  return best;
}

Result<int64_t> earlierRunsUsedNsFromAccounting(uint32_t job_id, int timeout_ms) {
  exec::ClientCall call;
  call.argv = {"sacct", "-n", "-P", "-D", "-X", "-j", std::to_string(job_id), "-o", "AdminComment"};
  call.timeout = std::chrono::milliseconds(timeout_ms);
  call.inherit_environment = true;
  call.max_output = 1u << 20;
  auto ran = exec::runClient(call);
  if (!ran.ok()) return Error(ran.error().code(), "sacct: " + ran.error().message());
  if (!ran->succeeded()) return Error(ErrorCode::kUnavailable, "sacct: " + ran->describe());
  return earlierRunsUsedNs(ran->out);
}

}  // namespace accel::agentd
