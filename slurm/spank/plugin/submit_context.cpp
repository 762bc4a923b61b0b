#include "submit_context.h"

#include <cstdlib>

#include "accel/spank/site_config.h"
#include "accel/spank/submit_check.h"
#include "plugin_state.h"
#include "task_count.h"

namespace accel::spank::submit {
namespace {

// Hands the validated request to the Prolog. slurmd adds the SPANK_ prefix:
// accelctl prolog reads SPANK_ACCEL_IPUS and so on.
int exportToProlog(spank_t sp, const JobOptions& options) {
  // The tasks per node only matter to an IPU job (one GCD each).
  std::optional<std::uint32_t> ntasks = options.ipus > 0 ? tasksPerNodeAsGiven(sp) : std::nullopt;
  for (const auto& [name, value] : prologEnv(options, ntasks)) {
    spank_err_t rc = spank_job_control_setenv(sp, name.c_str(), value.c_str(), 1);
    if (rc != ESPANK_SUCCESS) {
      reportError("cannot pass " + name + " to the Prolog: " + spank_strerror(rc));
      return -1;
    }
  }
  return 0;
}

}  // namespace

int init(spank_t sp, int argc, char** argv) {
  if (!parseArgs(argc, argv)) {
    reportError(*state().args_error);
    return -1;
  }
  return registerOptions(sp);
}

int initPostOpt(spank_t sp) {
  const RawOptions& raw = state().raw;
  auto paths = locateConfig(state().args, std::getenv("SLURM_CONF"));
  Result<SiteLimits> limits =
      paths.ok() ? readSiteLimits(*paths, raw.ipus.has_value()) : paths.error();
  if (!limits.ok()) {
    // Without its limits no option can be checked. A job that gave none is
    // left alone: a broken accel.conf must not stop every submission.
    if (!raw.any()) {
      slurm_verbose("accel: %s (no accel option given; the job goes ahead)",
                    limits.error().message().c_str());
      return 0;
    }
    reportError(limits.error().message());
    return -1;
  }
  auto options = checkOptions(raw, *limits);
  if (!options.ok()) {
    reportError(options.error().message());
    return -1;
  }
  return exportToProlog(sp, *options);
}

}  // namespace accel::spank::submit
