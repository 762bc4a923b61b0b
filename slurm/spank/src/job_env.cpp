#include "accel/spank/job_env.h"

#include "accel/common/config_errors.h"
#include "accel/common/config_file.h"
#include "accel/common/vipu_config.h"
#include "accel/spank/option_values.h"

namespace accel::spank {
namespace {

Error refuse(std::string message) { return Error(ErrorCode::kInvalidArgument, std::move(message)); }

class Reader {
 public:
  explicit Reader(const JobEnvLookup& lookup) : lookup_(lookup) {}

  // The value of SPANK_<name>, or nullopt when unset.
  std::optional<std::string> get(const char* name) const {
    const std::string full = std::string(kJobEnvPrefix) + name;
    const char* v = lookup_(full.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  }

  static std::string shown(const char* name, const std::string& value) {
    return std::string(kJobEnvPrefix) + name + "=" + quoteForMessage(value, 40);
  }

 private:
  const JobEnvLookup& lookup_;
};

// ACCEL_APPLIANCE_TIME (whole seconds) and where it came from. The plugin
// always sets the source beside the time.
Status readTime(const Reader& env, RawOptions* raw, bool* from_default) {
  auto time = env.get(kEnvApplianceTime);
  auto source = env.get(kEnvApplianceTimeSource);
  if (source && *source != "option" && *source != "default")
    return refuse(Reader::shown(kEnvApplianceTimeSource, *source) +
                  ": neither 'option' nor 'default'");
  if (source && !time)
    return refuse(Reader::shown(kEnvApplianceTimeSource, *source) + " without " +
                  std::string(kJobEnvPrefix) + kEnvApplianceTime);
  *from_default = source && *source == "default";
  if (time) raw->job_time_sec = *time;
  return okStatus();
}

// ACCEL_APPLIANCE_SIGNAL (a number) and ACCEL_APPLIANCE_SIGNAL_LEAD (seconds)
// become --appliance-signal=SIG@LEAD, B:SIG@LEAD with
// ACCEL_APPLIANCE_SIGNAL_BATCH=1; the plugin sets the first two or neither.
Status readSignal(const Reader& env, RawOptions* raw) {
  auto sig = env.get(kEnvApplianceSignal);
  auto lead = env.get(kEnvApplianceSignalLead);
  auto batch = env.get(kEnvApplianceSignalBatch);
  if (batch && *batch != "1")
    return refuse(Reader::shown(kEnvApplianceSignalBatch, *batch) + ": not 1");
  if (batch && !sig)
    return refuse(Reader::shown(kEnvApplianceSignalBatch, *batch) + " without " +
                  std::string(kJobEnvPrefix) + kEnvApplianceSignal);
  if (!sig && !lead) return okStatus();
  if (!sig)
    return refuse(Reader::shown(kEnvApplianceSignalLead, *lead) + " without " +
                  std::string(kJobEnvPrefix) + kEnvApplianceSignal);
  if (!lead)
    return refuse(Reader::shown(kEnvApplianceSignal, *sig) + " without " +
                  std::string(kJobEnvPrefix) + kEnvApplianceSignalLead);
  // An '@' in the signal would smuggle in a lead of its own, a ':' a target.
  if (sig->find_first_of("@:") != std::string::npos)
    return refuse(Reader::shown(kEnvApplianceSignal, *sig) + ": not a signal");
  raw->appliance_signal = (batch ? "B:" : "") + *sig + "@" + *lead;
  return okStatus();
}

Result<std::uint32_t> readNtasks(const Reader& env) {
  auto text = env.get(kEnvNtasks);
  if (!text) return 0u;
  ParsedNumber n = parseWholeNumber(*text, kMaxTasksOnNode);
  if (n.problem == NumberProblem::kNone && n.value >= 1) return static_cast<std::uint32_t>(n.value);
  const std::string why =
      n.problem == NumberProblem::kNone ? "zero tasks" : std::string(describe(n.problem));
  return refuse(Reader::shown(kEnvNtasks, *text) + ": " + why + "; a job has 1 to " +
                std::to_string(kMaxTasksOnNode) + " tasks on a node");
}

}  // namespace

Result<JobEnvOptions> readJobEnv(const JobEnvLookup& lookup, const SiteLimits& limits) {
  const Reader env(lookup);
  RawOptions raw;
  raw.ipus = env.get(kEnvIpus);
  raw.num_replicas = env.get(kEnvNumReplicas);
  bool from_default = false;
  ACCEL_TRY(readTime(env, &raw, &from_default));
  ACCEL_TRY(readSignal(env, &raw));
  auto options = checkOptions(raw, limits);
  ACCEL_TRY(options);
  if (from_default) options->appliance_time_from_default = true;
  JobEnvOptions out;
  out.options = *options;
  if (out.options.ipus > 0) {
    auto ntasks = readNtasks(env);
    ACCEL_TRY(ntasks);
    out.ntasks = *ntasks;
  }
  return out;
}

SiteLimits nodeSiteLimits(const AccelConfig& config, const std::string& accel_conf_path,
                          bool want_ipus) {
  SiteLimits limits;
  limits.accel_conf_path = accel_conf_path;
  limits.appliance_time_max = config.appliance_time_max;
  limits.appliance_time_default = config.appliance_time_default;
  limits.vipu_conf_path = configPathBeside(accel_conf_path, kVipuConfName);
  if (!want_ipus) return limits;
  limits.max_ipus = kNodeIpusWithoutVipuConf;
  auto text = readConfigFile(limits.vipu_conf_path);
  if (!text.ok()) return limits;
  auto vipu = parseVipuConfig(*text, limits.vipu_conf_path);
  if (vipu.ok()) limits.max_ipus = vipu->max_ipus_per_job;
  return limits;
}

}  // namespace accel::spank
