#pragma once
// Submit-time checks of the plugin's options: the rules sbatch, salloc and
// srun apply before anything is queued, as pure functions of the typed text
// and the site's limits. The SPANK glue only gathers their inputs.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accel/common/result.h"
#include "accel/common/slurm_time.h"

namespace accel::spank {

// The options as typed; nullopt means "not given".
struct RawOptions {
  std::optional<std::string> ipus;
  std::optional<std::string> num_replicas;
  std::optional<std::string> appliance_time;
  std::optional<std::string> job_time_sec;
  std::optional<std::string> appliance_signal;

  // True when any option of the plugin was given: the job asked for
  // something only accel-agent can provide.
  bool any() const {
    return ipus || num_replicas || appliance_time || job_time_sec || appliance_signal;
  }
};

// What the site allows, from vipu.conf and accel.conf. Paths name the files
// in messages, so users know which setting refused them.
struct SiteLimits {
  // MaxIpusPerJob, or nullopt when the cluster has no vipu.conf (no IPUs).
  std::optional<std::uint32_t> max_ipus;
  // Why max_ipus is unknown when a vipu.conf exists but could not be read.
  std::optional<std::string> vipu_problem;
  std::string vipu_conf_path;

  SlurmDuration appliance_time_max = SlurmDuration::unlimited();
  std::optional<SlurmDuration> appliance_time_default;
  std::string accel_conf_path;
};

// The validated request. Zero counts mean "not asked".
struct JobOptions {
  std::uint32_t ipus = 0;
  std::uint32_t num_replicas = 0;
  // Finite appliance limit in seconds, explicit or the site default; nullopt:
  // no limit. from_default tells the two apart.
  std::optional<std::int64_t> appliance_time_sec;
  bool appliance_time_from_default = false;
  int appliance_signal = 0;  // 0: none asked
  std::uint32_t appliance_signal_lead_sec = 0;
  bool appliance_signal_batch = false;  // B:, the batch shell only; else the steps
};

// Checks every rule and returns the request, or the first problem found as a
// kInvalidArgument Error whose message is one line of the form
// "--option=value: what is wrong; what is allowed" (no "accel: " prefix).
// Order of checks: --ipus, --num-replicas, the appliance time, the signal.
Result<JobOptions> checkOptions(const RawOptions& raw, const SiteLimits& limits);

// The job-control environment for the Prolog (without the SPANK_ prefix slurmd
// adds): ACCEL_IPUS, ACCEL_NUM_REPLICAS, ACCEL_NTASKS (only for IPU jobs, and
// only when `ntasks` is known), ACCEL_APPLIANCE_TIME (seconds),
// ACCEL_APPLIANCE_SIGNAL (number) and ACCEL_APPLIANCE_SIGNAL_LEAD (seconds).
// Variables for things not asked are left out; a job that asked for nothing
// gets an empty list.
std::vector<std::pair<std::string, std::string>> prologEnv(const JobOptions& options,
                                                           std::optional<std::uint32_t> ntasks);

}  // namespace accel::spank
