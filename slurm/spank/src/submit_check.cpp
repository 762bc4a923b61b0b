#include "accel/spank/submit_check.h"

#include <limits>

#include "accel/common/config_errors.h"
#include "accel/spank/job_env.h"
#include "accel/spank/option_values.h"

namespace accel::spank {
namespace {

constexpr std::uint64_t kMaxCount = std::numeric_limits<std::uint32_t>::max();

Error refuse(std::string message) { return Error(ErrorCode::kInvalidArgument, std::move(message)); }

// The value as the user typed it when that is harmless to print, else quoted
// with control bytes escaped: a refusal must stay on one line.
std::string shown(std::string_view text) {
  bool plain = text.size() <= 40;
  for (char c : text) plain = plain && c > ' ' && c < 0x7f;
  return plain ? std::string(text) : quoteForMessage(text, 40);
}

std::string opt(std::string_view name, const std::string& value) {
  return "--" + std::string(name) + "=" + shown(value);
}

std::string seconds(std::int64_t s) {
  return std::to_string(s) + (s == 1 ? " second" : " seconds");
}

// "1, 2 or 4 (the divisors of --ipus=4)" when there are few, else "a divisor of --ipus=96".
std::string divisorsOf(std::uint32_t n) {
  std::vector<std::uint32_t> small, large;
  for (std::uint64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(static_cast<std::uint32_t>(d));
    if (d * d != n) large.insert(large.begin(), static_cast<std::uint32_t>(n / d));
  }
  small.insert(small.end(), large.begin(), large.end());
  const std::string ipus = "--ipus=" + std::to_string(n);
  if (small.size() > 8) return "a divisor of " + ipus;
  std::string out;
  for (std::size_t i = 0; i < small.size(); ++i) {
    if (i > 0) out += (i + 1 == small.size()) ? " or " : ", ";
    out += std::to_string(small[i]);
  }
  return out + (small.size() == 1 ? " (the only divisor of " : " (the divisors of ") + ipus + ")";
}

Result<std::uint32_t> checkIpus(const std::string& text, const SiteLimits& limits) {
  const std::string me = opt("ipus", text);
  if (limits.vipu_problem)
    return refuse(me + ": the IPU limits cannot be read: " + *limits.vipu_problem);
  if (!limits.max_ipus)
    return refuse(me + ": this cluster has no IPUs (" + limits.vipu_conf_path + " does not exist)");
  const std::uint32_t max = *limits.max_ipus;
  const std::string source = " (MaxIpusPerJob in " + limits.vipu_conf_path + ")";
  ParsedNumber n = parseWholeNumber(text, max);
  if (n.problem == NumberProblem::kTooLarge)
    return refuse(me + ": at most " + std::to_string(max) + " IPUs per job" + source);
  const std::string allowed = "; give 1 to " + std::to_string(max) + " IPUs" + source;
  if (n.problem != NumberProblem::kNone)
    return refuse(me + ": " + std::string(describe(n.problem)) + allowed);
  if (n.value == 0) return refuse(me + ": a job asks for at least 1 IPU" + allowed);
  if ((n.value & (n.value - 1)) != 0) {
    // V-IPU partitions come in powers of two; name the two nearest sizes.
    std::uint64_t below = 1;
    while (below * 2 < n.value) below *= 2;
    std::string sizes = std::to_string(below);
    if (below * 2 <= max) sizes += " or " + std::to_string(below * 2);
    return refuse(me + ": IPU partitions hold a power of two of IPUs (1, 2, 4, 8, ...); give " +
                  sizes);
  }
  return static_cast<std::uint32_t>(n.value);
}

Result<std::uint32_t> checkReplicas(const std::string& text, std::uint32_t ipus) {
  const std::string me = opt("num-replicas", text);
  if (ipus == 0) return refuse(me + ": needs --ipus; the replicas share the job's IPUs");
  const std::string allowed = "; give " + divisorsOf(ipus);
  ParsedNumber n = parseWholeNumber(text, kMaxCount);
  if (n.problem != NumberProblem::kNone)
    return refuse(me + ": " + std::string(describe(n.problem)) + allowed);
  if (n.value == 0) return refuse(me + ": a job has at least 1 replica" + allowed);
  if (ipus % n.value != 0)
    return refuse(me + ": does not divide --ipus=" + std::to_string(ipus) + allowed);
  return static_cast<std::uint32_t>(n.value);
}

// A limit asked for, before the site maximum is applied. Unlimited only from
// --appliance-time=UNLIMITED.
Result<SlurmDuration> parseLimit(const RawOptions& raw, std::string* me) {
  if (raw.appliance_time) {
    *me = opt("appliance-time", *raw.appliance_time);
    auto d = parseSlurmTime(*raw.appliance_time);
    if (!d.ok()) return refuse(*me + ": " + d.error().message());
    return *d;
  }
  *me = opt("job-time-sec", *raw.job_time_sec);
  ParsedNumber n =
      parseWholeNumber(*raw.job_time_sec, static_cast<std::uint64_t>(kMaxSlurmTimeSeconds));
  if (n.problem == NumberProblem::kTooLarge)
    return refuse(*me + ": too large; Slurm times end at " + seconds(kMaxSlurmTimeSeconds));
  if (n.problem != NumberProblem::kNone)
    return refuse(*me + ": " + std::string(describe(n.problem)) +
                  "; give the limit in whole seconds");
  return SlurmDuration::fromSeconds(static_cast<std::int64_t>(n.value));
}

Status checkLimit(const RawOptions& raw, const SiteLimits& limits, JobOptions* out) {
  if (raw.appliance_time && raw.job_time_sec) {
    return refuse(opt("appliance-time", *raw.appliance_time) + " and " +
                  opt("job-time-sec", *raw.job_time_sec) +
                  ": give only one; both set the same appliance time limit");
  }
  if (!raw.appliance_time && !raw.job_time_sec) {
    if (limits.appliance_time_default && !limits.appliance_time_default->isUnlimited()) {
      out->appliance_time_sec = limits.appliance_time_default->seconds();
      out->appliance_time_from_default = true;
    }
    return okStatus();
  }
  std::string me;
  auto limit = parseLimit(raw, &me);
  ACCEL_TRY(limit);
  const bool max_finite = !limits.appliance_time_max.isUnlimited();
  if (!limit->isUnlimited() && limit->seconds() == 0) {
    // Unlike sbatch --time=0, zero does not mean "no limit" here: say how to get that.
    bool offer_unlimited = raw.appliance_time && !max_finite;
    return refuse(me + ": a limit of zero is not allowed; give at least 1 second" +
                  (offer_unlimited ? std::string(", or UNLIMITED") : std::string()));
  }
  if (*limit > limits.appliance_time_max) {
    const auto& max = limits.appliance_time_max;
    return refuse(me + ": above the site maximum of " + formatSlurmTime(max) + " (" +
                  seconds(max.seconds()) + "; ApplianceTimeMax in " + limits.accel_conf_path + ")");
  }
  if (!limit->isUnlimited()) out->appliance_time_sec = limit->seconds();
  return okStatus();
}

Status checkSignal(const std::string& text, const SiteLimits& limits, JobOptions* out) {
  const std::string me = opt("appliance-signal", text);
  auto spec = parseSignalSpec(text);
  if (!spec.ok()) return refuse(me + ": " + spec.error().message());
  if (!out->appliance_time_sec) {
    return refuse(me +
                  ": the job has no appliance time limit to warn before; add --appliance-time "
                  "or --job-time-sec");
  }
  const std::int64_t limit = *out->appliance_time_sec;
  if (static_cast<std::int64_t>(spec->lead_sec) >= limit) {
    std::string source = out->appliance_time_from_default
                             ? " (ApplianceTimeDefault in " + limits.accel_conf_path + ")"
                             : std::string();
    return refuse(me + ": the warning would come at once: the appliance time limit is " +
                  seconds(limit) + source + "; give a lead below " + std::to_string(limit));
  }
  out->appliance_signal = spec->number;
  out->appliance_signal_lead_sec = spec->lead_sec;
  out->appliance_signal_batch = spec->target == SignalTarget::kBatch;
  return okStatus();
}

}  // namespace

Result<JobOptions> checkOptions(const RawOptions& raw, const SiteLimits& limits) {
  JobOptions out;
  if (raw.ipus) {
    auto ipus = checkIpus(*raw.ipus, limits);
    ACCEL_TRY(ipus);
    out.ipus = *ipus;
  }
  if (raw.num_replicas) {
    auto replicas = checkReplicas(*raw.num_replicas, out.ipus);
    ACCEL_TRY(replicas);
    out.num_replicas = *replicas;
  }
  ACCEL_TRY(checkLimit(raw, limits, &out));
  if (raw.appliance_signal) ACCEL_TRY(checkSignal(*raw.appliance_signal, limits, &out));
  return out;
}

std::vector<std::pair<std::string, std::string>> prologEnv(const JobOptions& options,
                                                           std::optional<std::uint32_t> ntasks) {
  std::vector<std::pair<std::string, std::string>> env;
  if (options.ipus > 0) {
    env.emplace_back(kEnvIpus, std::to_string(options.ipus));
    // The tasks of an IPU job are the GCDs of its partition; elsewhere the
    // count means nothing to the agent.
    if (ntasks && *ntasks > 0) env.emplace_back(kEnvNtasks, std::to_string(*ntasks));
  }
  if (options.num_replicas > 0)
    env.emplace_back(kEnvNumReplicas, std::to_string(options.num_replicas));
  if (options.appliance_time_sec) {
    env.emplace_back(kEnvApplianceTime, std::to_string(*options.appliance_time_sec));
    // The Prolog must tell a limit the user asked for from the site's
    // default: only the first makes the job depend on the agent being up.
    env.emplace_back(kEnvApplianceTimeSource,
                     options.appliance_time_from_default ? "default" : "option");
  }
  if (options.appliance_signal != 0) {
    env.emplace_back(kEnvApplianceSignal, std::to_string(options.appliance_signal));
    env.emplace_back(kEnvApplianceSignalLead, std::to_string(options.appliance_signal_lead_sec));
    if (options.appliance_signal_batch) env.emplace_back(kEnvApplianceSignalBatch, "1");
  }
  return env;
}

}  // namespace accel::spank
