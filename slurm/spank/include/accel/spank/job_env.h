#pragma once
// The job-control environment the plugin hands to the Prolog, and the
// Prolog's reading of it. The plugin sets ACCEL_* with
// spank_job_control_setenv (prologEnv() in submit_check.h); slurmd gives them
// to the hooks as SPANK_ACCEL_*. A job submitted through libslurm directly,
// not through sbatch, salloc or srun, carries whatever its user wrote there,
// unseen by the plugin. So the node reads these variables as the plugin reads
// options: the same parsers and checkOptions() itself, against the node's
// own limits. Nothing here trusts a value because the plugin could have
// written it.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "accel/common/config.h"
#include "accel/common/result.h"
#include "accel/spank/submit_check.h"

namespace accel::spank {

// The names the plugin sets; slurmd adds kJobEnvPrefix.
inline constexpr std::string_view kJobEnvPrefix = "SPANK_";
inline constexpr const char* kEnvIpus = "ACCEL_IPUS";
inline constexpr const char* kEnvNumReplicas = "ACCEL_NUM_REPLICAS";
inline constexpr const char* kEnvNtasks = "ACCEL_NTASKS";
inline constexpr const char* kEnvApplianceTime = "ACCEL_APPLIANCE_TIME";
inline constexpr const char* kEnvApplianceTimeSource = "ACCEL_APPLIANCE_TIME_SOURCE";
inline constexpr const char* kEnvApplianceSignal = "ACCEL_APPLIANCE_SIGNAL";
inline constexpr const char* kEnvApplianceSignalLead = "ACCEL_APPLIANCE_SIGNAL_LEAD";
// "1" when the warning goes to the batch shell only (B:); unset otherwise.
inline constexpr const char* kEnvApplianceSignalBatch = "ACCEL_APPLIANCE_SIGNAL_BATCH";

// The most tasks of one job on one node the agent takes (one GCD each).
inline constexpr std::uint32_t kMaxTasksOnNode = 65536;
// MaxIpusPerJob on a node without a readable vipu.conf. Such a node either
// has IPUs of its own (their count bounds the job) or none at all (the
// daemon fails the job as a fault of the cluster's configuration); the rules
// on the value's form still apply.
inline constexpr std::uint32_t kNodeIpusWithoutVipuConf = 65536;

// What the Prolog takes from the job's SPANK environment.
struct JobEnvOptions {
  JobOptions options;
  // ACCEL_NTASKS: the job's tasks on this node, 0 when not given (the
  // plugin could not know it, or the job asked for no IPUs).
  std::uint32_t ntasks = 0;
};

// Looks a variable up by its full name (with kJobEnvPrefix); nullptr: unset.
// An empty value is set, and refused where a number is due.
using JobEnvLookup = std::function<const char*(const char* name)>;

// Reads the job's SPANK_ACCEL_* variables and checks them with the plugin's
// rules against `limits`: ACCEL_IPUS as --ipus, ACCEL_NUM_REPLICAS as
// --num-replicas, ACCEL_APPLIANCE_TIME as --job-time-sec (a value from the
// site default is checked alike and stays marked as such), the signal and
// its lead as --appliance-signal=SIG@LEAD (B:SIG@LEAD with
// ACCEL_APPLIANCE_SIGNAL_BATCH=1). With no ACCEL_APPLIANCE_TIME the
// limits' ApplianceTimeDefault applies, as at submission. ACCEL_NTASKS must
// be 1 to kMaxTasksOnNode; it is ignored for a job without IPUs.
// kInvalidArgument: one line saying what is wrong, in the words of the
// plugin's own refusals ("--ipus=abc: not a whole number; ..."), values
// quoted so that the line is printable ASCII. Never reads a number into a
// type it might not fit: every value is bounded while it is parsed.
Result<JobEnvOptions> readJobEnv(const JobEnvLookup& lookup, const SiteLimits& limits);

// The limits a node applies to the SPANK environment: ApplianceTimeMax and
// ApplianceTimeDefault of its accel.conf (`config`, read from
// `accel_conf_path`), MaxIpusPerJob of the vipu.conf beside it. vipu.conf is
// read only when `want_ipus`; a missing or unreadable one gives
// kNodeIpusWithoutVipuConf (the daemon judges such a node, not the job).
SiteLimits nodeSiteLimits(const AccelConfig& config, const std::string& accel_conf_path,
                          bool want_ipus);

}  // namespace accel::spank
