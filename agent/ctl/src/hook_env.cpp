#include "accel/ctl/hook_env.h"

#include <charconv>

#include "accel/common/hostlist.h"
#include "accel/common/text.h"
#include "accel/spank/job_env.h"

namespace accel::ctl {
namespace {

// A whole non-negative number, or an error naming the variable.
template <typename T>
Result<T> number(const CliIo& io, const char* name, bool required, T fallback) {
  const char* v = io.getenv(name);
  if (v == nullptr || *v == '\0') {
    if (required)
      return Error(ErrorCode::kInvalidArgument,
                   std::string(name) + " is not set (is this run by slurmd?)");
    return fallback;
  }
  T out{};
  std::string_view s(v);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || p != s.data() + s.size())
    return Error(ErrorCode::kInvalidArgument,
                 std::string(name) + "='" + s.data() + "' is not a whole number");
  return out;
}

std::string text(const CliIo& io, const char* name) {
  const char* v = io.getenv(name);
  return v == nullptr ? "" : v;
}

// At most 80 bytes of a value, printable, for a note.
std::string shown(const std::string& v) {
  std::string out = v.substr(0, 80);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return v.size() > 80 ? out + "..." : out;
}

// The job's nodes. slurmd 22.05 gives its hooks SLURM_NODELIST; newer ones
// SLURM_JOB_NODELIST. What cannot be used is left unknown with a note.
void readNodes(const CliIo& io, HookEnv& e) {
  const char* set = io.getenv("SLURM_NODELIST");
  const char* list_var = set != nullptr && *set != '\0' ? "SLURM_NODELIST" : "SLURM_JOB_NODELIST";
  std::string list = text(io, list_var);
  if (list.size() > kMaxNodeListBytes) {
    e.notes.push_back(std::string(list_var) + " is longer than " +
                      std::to_string(kMaxNodeListBytes) +
                      " bytes; the job's nodes are taken as unknown");
  } else if (!isCleanText(list, kMaxNodeListBytes)) {
    e.notes.push_back(std::string(list_var) +
                      " is not clean text; the job's nodes are taken as unknown");
  } else {
    e.node_list = std::move(list);
  }
  auto count = number<uint32_t>(io, "SLURM_JOB_NUM_NODES", false, 0);
  if (!count.ok() || *count > kMaxHostlistNames) {
    e.notes.push_back("SLURM_JOB_NUM_NODES='" + shown(text(io, "SLURM_JOB_NUM_NODES")) +
                      "' is not a node count; taken as unknown");
    return;
  }
  e.node_count = *count;
}

// SLURM_JOB_RESTART_COUNT: how often the job was requeued before this run
// (0, or unset, on its first run).
void readRestarts(const CliIo& io, HookEnv& e) {
  auto restarts = number<uint32_t>(io, "SLURM_JOB_RESTART_COUNT", false, 0);
  if (!restarts.ok()) {
    e.notes.push_back("SLURM_JOB_RESTART_COUNT='" + shown(text(io, "SLURM_JOB_RESTART_COUNT")) +
                      "' is not a count; taken as the first run");
    return;
  }
  e.restart_count = *restarts;
}

// The refusal as the daemon takes it: printable ASCII (a path in a message
// may hold other bytes), at most kMaxRefusalBytes.
std::string refusalText(const std::string& why) {
  std::string out =
      "the job's accelerator options (SPANK_ACCEL_*, normally set by spank_accel.so at submission) "
      "are refused: " +
      why;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  if (out.size() > kMaxRefusalBytes) out = out.substr(0, kMaxRefusalBytes - 3) + "...";
  return out;
}

}  // namespace

Result<HookEnv> readHookEnv(const CliIo& io, bool full) {
  HookEnv e;
  auto id = number<uint32_t>(io, "SLURM_JOB_ID", true, 0);
  ACCEL_TRY(id);
  if (*id == 0) return Error(ErrorCode::kInvalidArgument, "SLURM_JOB_ID=0 is not a job");
  e.job_id = *id;
  auto uid = number<uint32_t>(io, "SLURM_JOB_UID", full, 0);
  ACCEL_TRY(uid);
  e.uid = *uid;
  if (!full) return e;
  auto gid = number<uint32_t>(io, "SLURM_JOB_GID", false, *uid);
  ACCEL_TRY(gid);
  e.gid = *gid;
  e.user = text(io, "SLURM_JOB_USER");
  e.node = text(io, "SLURMD_NODENAME");
  e.partition = text(io, "SLURM_JOB_PARTITION");
  e.gpus = text(io, "SLURM_JOB_GPUS");
  readNodes(io, e);
  readRestarts(io, e);
  return e;
}

void readJobOptions(const CliIo& io, const spank::SiteLimits& limits, HookEnv& e) {
  auto read = spank::readJobEnv([&io](const char* name) { return io.getenv(name); }, limits);
  if (!read.ok()) {
    e.refusal = refusalText(read.error().message());
    return;
  }
  const auto& o = read->options;
  e.ipus = o.ipus;
  e.num_replicas = o.num_replicas;
  e.ntasks = read->ntasks;
  e.appliance_time_sec = o.appliance_time_sec.value_or(-1);
  e.limit_from_default = o.appliance_time_from_default;
  e.appliance_signal = o.appliance_signal;
  e.appliance_signal_lead_sec = o.appliance_signal_lead_sec;
  e.appliance_signal_batch = o.appliance_signal_batch;
}

std::vector<uint8_t> prologRequest(const HookEnv& e) { return ipc::encodePrologRequest(e); }

std::vector<uint8_t> epilogRequest(const HookEnv& e) {
  return ipc::encodeEpilogRequest(e.job_id, e.uid);
}

}  // namespace accel::ctl
