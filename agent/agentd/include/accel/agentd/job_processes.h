#pragma once
// Every process of a job's steps on this node, for the appliance limit.
//
// A job's work is a process tree: a wrapper shell, python with workers, a
// launcher, a double-forked helper. The task pids the SPANK plugin registers
// are only the top of each tree, so at the limit the node's process tracking
// is the truth: Slurm's proctrack/cgroup keeps each step in a cgroup of its
// own, below the job's (v1: <freezer>/slurm[_<node>]/uid_<uid>/job_<id>/
// step_<step>; v2: .../job_<id>/step_<step>/user/task_<n>, slurmstepd beside
// it in step_<step>/slurm). The job's cgroup is found from what the node
// already knows: a registered task's /proc/PID/cgroup, read through the mount
// table (no path is guessed), and checked to name this job (and, on v1, its
// user).
//
// What each limit action reaches, as Slurm's own limit and --signal do:
//   warn     without B: every process of every step but the batch step;
//            with B: the batch shell alone (its registered task)
//   enforce  every process of every step (SIGTERM) but srun, which would kill
//            its step at once on SIGTERM and so cut the tasks' grace short
//            (it ends with its tasks, and SIGKILL reaches it after the grace)
//   kill     every process of every step (SIGKILL; on v1 the step's freezer
//            is frozen first, so that nothing forks past the signal; on v2
//            cgroup.kill does it in one write)
// The extern step (Slurm's own, and ssh sessions adopted into the job) is left
// to Slurm, which ends it with the job. The waiters of the steps the record
// spares (agent::sparedSteps: surrogate steps) get neither the warning nor
// SIGTERM. Only processes of the job's user are signalled, never slurmstepd.
//
// Without cgroup tracking (proctrack/linuxproc or pgid) slurmctld is asked to
// signal the job's steps, first (a task that ended on a signal of ours would
// leave its children to init, beyond Slurm's tracking too), and the
// registered tasks are signalled directly where slurmctld cannot. That
// reaches what Slurm's own tracking finds: a process that left its step's
// process tree (linuxproc) or process group (pgid) is lost, and the waiters
// of surrogate steps are not spared (their steps read CANCELLED). The node
// says so once in its log and in `accelctl status`.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/agent/job_manager.h"
#include "accel/common/result.h"

namespace accel::agentd {

// Slurm's step ids of its special steps (slurm.h).
inline constexpr uint32_t kExternStepId = 0xfffffffc;       // SLURM_EXTERN_CONT
inline constexpr uint32_t kInteractiveStepId = 0xfffffffa;  // SLURM_INTERACTIVE_STEP

enum class CgroupVersion { kV1, kV2 };

// A cgroup file system mounted here: a v1 hierarchy with the freezer
// controller, or the v2 (unified) one.
struct CgroupMount {
  CgroupVersion version = CgroupVersion::kV1;
  std::string root;         // the hierarchy's path shown at the mount point ("/" mostly)
  std::string mount_point;  // where it is mounted
};

// The freezer (v1) and cgroup2 mounts of a /proc/PID/mountinfo text.
std::vector<CgroupMount> cgroupMounts(std::string_view mountinfo);

struct JobCgroup {
  CgroupVersion version = CgroupVersion::kV1;
  std::string dir;  // the job_<id> directory, an absolute path here
};

// The job's cgroup from one of its task's /proc/PID/cgroup text: the v1
// freezer hierarchy's path, else the v2 one, cut after its `job_<id>`
// component, which must be there exactly once (on v1 right below
// `uid_<uid>`), and mapped through the mount it is under. Nothing when the
// task is not in a cgroup of this job.
std::optional<JobCgroup> jobCgroupFrom(std::string_view proc_cgroup,
                                       const std::vector<CgroupMount>& mounts, uint32_t job_id,
                                       uint32_t uid);

// The step id a step cgroup's name stands for: step_batch, step_extern,
// step_interactive, step_<n>. Nothing for any other name.
std::optional<uint32_t> stepOfCgroupName(std::string_view name);

// The steps an action reaches: the record's steps minus what it spares (see
// above). `step` is a step of the job.
bool actionReachesStep(const agent::JobRecord& rec, agent::LimitAction action, uint32_t step);

// A process of the job left after SIGKILL.
struct Leftover {
  int32_t pid = 0;
  std::string comm;
  char state = '?';
};

class JobProcesses {
 public:
  // Asks slurmctld to signal the job, as `scancel --signal` does: every step
  // but the batch step (`steps_only`), or every step and the batch step; for
  // the node without cgroup tracking. Slow (a child process): called off the
  // limit thread.
  using AskSlurm = std::function<Status(uint32_t job_id, int sig, bool steps_only)>;
  struct Options {
    std::string proc_root = "/proc";
    // The cgroup mounts; unset: read from proc_root/self/mountinfo (tests
    // give their own).
    std::optional<std::vector<CgroupMount>> mounts;
    AskSlurm ask_slurm;  // unset: the registered tasks alone
    // Told describe()'s line when it changes (under a lock of this object:
    // it must not call back); unset: nothing.
    std::function<void(const std::string& how)> tracking_changed;
  };
  explicit JobProcesses(Options options);

  // Finds the job's cgroup while its tasks live (cached per run of the job);
  // any thread.
  void observe(const agent::JobRecord& rec);
  // Signals for `action`; returns how many processes were reached, or
  // kThroughSlurmctld where slurmctld is to signal the job (followUp). Only
  // signals: the limit thread calls it.
  static constexpr int kThroughSlurmctld = -1;
  int signal(const agent::JobRecord& rec, agent::LimitAction action, int sig);
  // What may take time after an action, on the enforcer's reporter thread:
  // without cgroup tracking, slurmctld signals the job (the registered tasks
  // are signalled here instead when it cannot, and get SIGKILL too). After
  // kKill, waits
  // up to `settle` for the job's processes to go; what is left is returned
  // (a node fault: the kernel did not end them).
  std::vector<Leftover> followUp(const agent::JobRecord& rec, agent::LimitAction action, int sig,
                                 std::chrono::milliseconds settle);
  // One line for `accelctl status`: how limits reach the job's processes.
  std::string describe() const;
  // Forgets jobs that are no longer listed.
  void retain(const std::vector<uint32_t>& live_jobs);

 private:
  std::optional<JobCgroup> cgroupOf(const agent::JobRecord& rec);
  std::optional<JobCgroup> resolve(const agent::JobRecord& rec);
  std::vector<std::string> stepDirs(const agent::JobRecord& rec, const JobCgroup& cg,
                                    agent::LimitAction action) const;
  int signalStep(const std::string& step_dir, const JobCgroup& cg, uint32_t uid, int sig,
                 bool freeze) const;
  std::vector<Leftover> leftovers(const agent::JobRecord& rec, const JobCgroup& cg) const;
  void noted(std::optional<JobCgroup> found);

  Options options_;
  std::vector<CgroupMount> mounts_;
  mutable std::mutex mu_;
  struct Cached {
    int64_t ready_ns = 0;
    std::optional<JobCgroup> cgroup;
  };
  std::map<uint32_t, Cached> cache_;
  std::string tracking_;  // describe(); empty until the first job was looked at
};

}  // namespace accel::agentd
