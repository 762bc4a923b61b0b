// spank_accel.so: the entry points Slurm looks up. Each one only picks the
// handler for the context it runs in; the handlers live in one file per
// context (submit_context.cpp for sbatch/salloc/srun, stepd_context.cpp for
// slurmstepd). No C++ exception may cross into Slurm's C code, so every entry
// point catches everything and turns it into a logged failure.
#include <slurm/slurm_version.h>

#include <exception>
#include <string>

#include "plugin_state.h"
#include "slurm_spank.h"
#include "stepd_context.h"
#include "submit_context.h"

// The plugin is compiled with hidden visibility; these are the names Slurm
// looks up (the linker's version script, exports.map, repeats the list).
#define ACCEL_SPANK_EXPORT __attribute__((visibility("default")))

extern "C" {
// What Slurm's plugin loader checks: the name (options are forwarded as
// _SLURM_SPANK_OPTION_accel_<option>), the type, and the Slurm release built
// against.
// `extern` because a const at namespace scope would otherwise be file-local.
ACCEL_SPANK_EXPORT extern const char plugin_name[] = "accel";
ACCEL_SPANK_EXPORT extern const char plugin_type[] = "spank";
ACCEL_SPANK_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
}

namespace accel::spank {
namespace {

enum class Phase { kInit, kInitPostOpt, kUserInit, kTaskInit, kTaskPostFork, kTaskExit, kExit };

const char* phaseName(Phase p) {
  switch (p) {
    case Phase::kInit:
      return "init";
    case Phase::kInitPostOpt:
      return "init_post_opt";
    case Phase::kUserInit:
      return "user_init";
    case Phase::kTaskInit:
      return "task_init";
    case Phase::kTaskPostFork:
      return "task_post_fork";
    case Phase::kTaskExit:
      return "task_exit";
    case Phase::kExit:
      return "exit";
  }
  return "?";
}

int onSubmit(Phase phase, spank_t sp, int argc, char** argv) {
  switch (phase) {
    case Phase::kInit:
      return submit::init(sp, argc, argv);
    case Phase::kInitPostOpt:
      return submit::initPostOpt(sp);
    default:
      return 0;  // sbatch, salloc and srun run no tasks of their own
  }
}

int onStepd(Phase phase, spank_t sp, int argc, char** argv) {
  switch (phase) {
    case Phase::kInit:
      return stepd::init(sp, argc, argv);
    case Phase::kInitPostOpt:
      return stepd::initPostOpt(sp);
    case Phase::kUserInit:
      return stepd::userInit(sp);
    case Phase::kTaskInit:
      return stepd::taskInit(sp);
    case Phase::kTaskPostFork:
      return stepd::taskPostFork(sp);
    case Phase::kTaskExit:
      return stepd::taskExit(sp);
    case Phase::kExit:
      return stepd::exit(sp);
  }
  return 0;
}

int dispatch(Phase phase, spank_t sp, int argc, char** argv) noexcept {
  try {
    switch (spank_context()) {
      case S_CTX_LOCAL:
      case S_CTX_ALLOCATOR:
        return onSubmit(phase, sp, argc, argv);
      case S_CTX_REMOTE:
        return onStepd(phase, sp, argc, argv);
      default:
        return 0;  // slurmd and the Prolog/Epilog: nothing to do here
    }
  } catch (const std::exception& e) {
    reportError(std::string("internal error in ") + phaseName(phase) + ": " + e.what());
  } catch (...) {
    reportError(std::string("internal error in ") + phaseName(phase));
  }
  // Inside slurmstepd a failure before the tasks start would drain the node;
  // there the step goes on (the job's tasks still start) and only the log says why.
  return spank_context() == S_CTX_REMOTE && phase != Phase::kTaskInit ? 0 : -1;
}

}  // namespace
}  // namespace accel::spank

using accel::spank::dispatch;
using accel::spank::Phase;

extern "C" {

ACCEL_SPANK_EXPORT int slurm_spank_init(spank_t sp, int argc, char** argv) {
  return dispatch(Phase::kInit, sp, argc, argv);
}

ACCEL_SPANK_EXPORT int slurm_spank_init_post_opt(spank_t sp, int argc, char** argv) {
  return dispatch(Phase::kInitPostOpt, sp, argc, argv);
}

ACCEL_SPANK_EXPORT int slurm_spank_user_init(spank_t sp, int argc, char** argv) {
  return dispatch(Phase::kUserInit, sp, argc, argv);
}

ACCEL_SPANK_EXPORT int slurm_spank_task_init(spank_t sp, int argc, char** argv) {
  return dispatch(Phase::kTaskInit, sp, argc, argv);
}

ACCEL_SPANK_EXPORT int slurm_spank_task_post_fork(spank_t sp, int argc, char** argv) {
  return dispatch(Phase::kTaskPostFork, sp, argc, argv);
}

ACCEL_SPANK_EXPORT int slurm_spank_task_exit(spank_t sp, int argc, char** argv) {
  return dispatch(Phase::kTaskExit, sp, argc, argv);
}

ACCEL_SPANK_EXPORT int slurm_spank_exit(spank_t sp, int argc, char** argv) {
  return dispatch(Phase::kExit, sp, argc, argv);
}

}  // extern "C"
