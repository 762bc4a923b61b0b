#pragma once
// What the agent asks of slurmctld, as an interface without any Slurm
// header: whether a job still lives, and draining the node. The real one is
// slurm::LibslurmSlurmctld (slurm/jobs/), which only accel-agentd's entry
// point links; the daemon reaches it through a child process
// (accel/agentd/slurm_jobs.h), since libslurm may end the process it runs in.
#include <cstdint>
#include <string>

#include "accel/common/result.h"

namespace accel::agentd {

// Whether a job the agent holds a record of still lives, as slurmctld sees
// it. kGone only on a definite answer: slurmctld no longer knows the job, or
// the job has ended (or was requeued) and is not completing. A completing job
// is kAlive: its epilog is still to come. (A job requeued and already running
// again elsewhere counts as alive; the node name the agent knows need not be
// Slurm's, and a wrong "gone" would tear down a running job.)
// kUnknown: slurmctld answered "invalid job id". A slurmctld that lost its
// state (or a confused one) says that of running jobs too, so the answer
// alone never ends a job: the sweep asks again later (stale_jobs.h).
enum class JobPresence { kAlive, kGone, kUnknown };

// Where a job's output goes, and whose it is (Slurmctld::jobOutput).
struct JobOutput {
  uint32_t uid = 0;
  uint32_t gid = 0;
  // The file the job's standard error goes to, with Slurm's patterns (%j,
  // %u, ...) filled in and made absolute against the job's working
  // directory. Empty: none (an interactive job; its output is srun's own).
  std::string path;
};

class Slurmctld {
 public:
  virtual ~Slurmctld() = default;
  // Errors: kUnavailable when slurmctld cannot answer.
  virtual Result<JobPresence> jobPresence(uint32_t job_id) = 0;
  // Drains `node` with `reason` (as root or SlurmUser; the reason's user is
  // this process's). A node already drained keeps draining, with this
  // reason. Errors: kUnavailable when slurmctld cannot answer,
  // kPermissionDenied when it refuses the caller, kNotFound for a node it
  // does not know, else kUnavailable.
  virtual Status drainNode(const std::string& node, const std::string& reason) = 0;
  // Signals the job's processes through Slurm's own process tracking, as
  // `scancel --signal` does (as root or SlurmUser): every step but the batch
  // step (`steps_only`), or the batch step too. For a node whose jobs are not
  // in cgroups of their own. Errors: kNotFound for a job slurmctld does not
  // know or that no longer runs, else kUnavailable.
  virtual Status signalJob(uint32_t job_id, int sig, bool steps_only) = 0;
  // The job's output file and owner, as slurmctld holds them. Errors:
  // kNotFound for a job it does not know, else kUnavailable; kUnsupported
  // where not implemented.
  virtual Result<JobOutput> jobOutput(uint32_t job_id) {
    (void)job_id;
    return Error(ErrorCode::kUnsupported, "slurmctld: job output: not implemented");
  }
  // Sends `text` to the job as `scontrol notify` does (as root or
  // SlurmUser): an interactive job's srun or salloc prints it; a batch job's
  // batch step writes it to the job's error file. Errors as signalJob's;
  // kUnsupported where not implemented.
  virtual Status notifyJob(uint32_t job_id, const std::string& text) {
    (void)job_id;
    (void)text;
    return Error(ErrorCode::kUnsupported, "slurmctld: notify: not implemented");
  }
};

}  // namespace accel::agentd
