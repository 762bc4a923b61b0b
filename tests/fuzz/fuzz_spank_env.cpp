// The Prolog's reading of a job's SPANK environment (accelctl prolog:
// ctl::readJobOptions, which runs spank::readJobEnv) on arbitrary values.
// Input: one byte saying which variables are set (bit i: the i-th of kVars;
// bit 7: the node has an ApplianceTimeDefault), then their values, separated
// by '\n' (a value may hold any other byte). Whatever is accepted must lie
// within the node's limits and read back the same from what the plugin would
// have written for it; whatever is refused must say so in one printable line
// of bounded length; either way the request sent to the daemon verifies.
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "accel/ctl/hook_env.h"
#include "accel/schemas/control_generated.h"
#include "accel/spank/job_env.h"

namespace {

constexpr const char* kVars[] = {"SPANK_ACCEL_IPUS",
                                 "SPANK_ACCEL_NUM_REPLICAS",
                                 "SPANK_ACCEL_NTASKS",
                                 "SPANK_ACCEL_APPLIANCE_TIME",
                                 "SPANK_ACCEL_APPLIANCE_TIME_SOURCE",
                                 "SPANK_ACCEL_APPLIANCE_SIGNAL",
                                 "SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD",
                                 "SPANK_ACCEL_APPLIANCE_SIGNAL_BATCH"};
constexpr std::uint32_t kMaxIpus = 64;
constexpr std::int64_t kTimeMax = 7200;

void check(bool ok) {
  if (!ok) std::abort();
}

accel::spank::SiteLimits limits(bool with_default) {
  accel::spank::SiteLimits l;
  l.max_ipus = kMaxIpus;
  l.vipu_conf_path = "/etc/slurm/vipu.conf";
  l.accel_conf_path = "/etc/slurm/accel.conf";
  l.appliance_time_max = accel::SlurmDuration::fromSeconds(kTimeMax);
  if (with_default) l.appliance_time_default = accel::SlurmDuration::fromSeconds(600);
  return l;
}

void checkAccepted(const accel::ctl::HookEnv& e) {
  check(e.ipus <= kMaxIpus && (e.ipus & (e.ipus - 1)) == 0);
  check(e.num_replicas == 0 || (e.ipus > 0 && e.ipus % e.num_replicas == 0));
  check(e.ntasks <= accel::spank::kMaxTasksOnNode && (e.ipus > 0 || e.ntasks == 0));
  check(e.appliance_time_sec == -1 ||
        (e.appliance_time_sec >= 1 && e.appliance_time_sec <= kTimeMax));
  check(e.appliance_signal >= 0 && e.appliance_signal <= 64);
  if (e.appliance_signal != 0)
    check(e.appliance_time_sec > 0 &&
          static_cast<std::int64_t>(e.appliance_signal_lead_sec) < e.appliance_time_sec);
  check(e.appliance_signal != 0 || !e.appliance_signal_batch);
}

// What the plugin would write for the accepted options reads back the same.
void checkRoundTrip(const accel::ctl::HookEnv& e, const accel::spank::SiteLimits& l) {
  accel::spank::JobOptions o;
  o.ipus = e.ipus;
  o.num_replicas = e.num_replicas;
  if (e.appliance_time_sec >= 0) o.appliance_time_sec = e.appliance_time_sec;
  o.appliance_time_from_default = e.limit_from_default;
  o.appliance_signal = e.appliance_signal;
  o.appliance_signal_lead_sec = e.appliance_signal_lead_sec;
  o.appliance_signal_batch = e.appliance_signal_batch;
  std::map<std::string, std::string> env;
  auto ntasks = e.ntasks > 0 ? std::optional<std::uint32_t>(e.ntasks) : std::nullopt;
  for (const auto& [k, v] : accel::spank::prologEnv(o, ntasks)) env["SPANK_" + k] = v;
  auto again = accel::spank::readJobEnv(
      [&env](const char* n) -> const char* {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      l);
  check(again.ok());
  check(again->options.ipus == e.ipus && again->options.num_replicas == e.num_replicas);
  check(again->options.appliance_time_sec.value_or(-1) == e.appliance_time_sec);
  check(again->options.appliance_signal == e.appliance_signal);
  check(again->options.appliance_signal_batch == e.appliance_signal_batch);
  check(again->ntasks == e.ntasks);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::uint8_t set = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::map<std::string, std::string> env;
  for (std::size_t i = 0; i < std::size(kVars); ++i) {
    std::size_t nl = rest.find('\n');
    std::string_view value = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if ((set >> i) & 1) env[kVars[i]] = std::string(value);
  }
  accel::ctl::CliIo io{[&env](const char* n) -> const char* {
                         auto it = env.find(n);
                         return it == env.end() ? nullptr : it->second.c_str();
                       },
                       [](const std::string&) {}, [](const std::string&) {}};
  const auto l = limits((set & 0x80) != 0);
  accel::ctl::HookEnv e;
  e.job_id = 42;
  accel::ctl::readJobOptions(io, l, e);
  if (e.refusal.empty()) {
    checkAccepted(e);
    checkRoundTrip(e, l);
  } else {
    check(e.refusal.size() <= accel::ctl::kMaxRefusalBytes);
    for (char c : e.refusal) check(c >= 0x20 && c < 0x7f);
    check(e.ipus == 0 && e.appliance_time_sec == -1 && e.appliance_signal == 0 && e.ntasks == 0);
  }
  auto request = accel::ctl::prologRequest(e);
  flatbuffers::Verifier v(request.data(), request.size());
  check(accel::control::VerifyRequestBuffer(v));
  return 0;
}
