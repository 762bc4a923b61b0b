#pragma once
// Surrogate steps (seed 000): each appliance job of a Slurm job gets a job
// step of that job, named after it, that lives while the appliance job runs
// and ends COMPLETED or FAILED with it. The agent starts
//   srun --jobid=J --overlap -J NAME --ntasks=1 accelctl wait-appliance J ID
// as the job's user (Slurm refuses root a step in another user's job); the
// waiter asks the daemon until the appliance job is over and exits 0 if it
// succeeded, 1 otherwise. The agent waits for srun: when srun ends while the
// appliance job still runs, Slurm ended the step (scancel, the job's end or
// time limit), and the owner of the step is told, to cancel the appliance job.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "accel/agent/job_record.h"
#include "accel/appliance/appliance.h"

namespace accel::agentd {

struct SurrogateSpec {
  uint32_t job_id = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;
  std::string appliance_job;  // a valid appliance job id
  std::string step_name;
};

struct SurrogateOptions {
  std::string srun = "srun";  // a path, or a name looked up in PATH
  std::string accelctl;       // absolute path of the waiter
  std::string config_path;    // accel.conf, passed to the waiter
  std::string slurm_conf;     // SLURM_CONF for srun; empty: srun's default
};

// Whether this node makes a surrogate step for `job`, an appliance job of
// the Slurm job `rec` holds: the first time it is seen running (or already
// over, when it ran between two polls), for a job that is ready here, and
// only on the job's leader (job_nodes.h): every node of a job sees the same
// appliance jobs, and each gets one step. Never for an entry the agent could
// not read (ApplianceJob::unreadable); at most kMaxSurrogateStepsPerJob a job
// (JobManager::claimSurrogate). Whether it already has one is the
// job manager's to say (claimSurrogate).
bool wantsSurrogate(const agent::JobRecord& rec, const appliance::ApplianceJob& job);

// The Slurm step name that stands for an appliance job.
std::string surrogateStepName(const appliance::ApplianceJob& job);

// The command line srun gets (pure, for tests).
std::vector<std::string> surrogateArgv(const SurrogateOptions& options, const SurrogateSpec& spec);

// What the agent reads of a process whose command line is a surrogate
// srun's, to decide whether a previous daemon started it.
struct ProcessFacts {
  std::vector<std::string> argv;
  uid_t real_uid = 0;
  uid_t effective_uid = 0;
  int64_t start_ns = 0;  // CLOCK_REALTIME, to the second (the kernel's boot time is)
  std::string cgroup;    // /proc/PID/cgroup as it reads
};

// What such an srun must also be, beyond its command line (which anyone can
// copy): run as the job's user, started while the job was ready here and
// before this daemon looked, in the daemon's own cgroup (under systemd the
// service's, where no user can put a process).
struct AdoptCheck {
  int64_t not_before_ns = 0;  // the job's ready time; 0: no lower bound
  int64_t not_after_ns = 0;   // when the daemon looked
  std::string cgroup;         // the daemon's /proc/self/cgroup
};

// How far a process's start time may lie outside those bounds: the kernel
// gives its boot time to the second, and the clock may have been stepped.
inline constexpr int64_t kAdoptClockSlackNs = 5'000'000'000;

// Whether `p` is the srun of `spec`'s step that a previous daemon started.
// Empty when it is, else why not (for the log).
std::string whyNotSurrogateSrun(const ProcessFacts& p, const SurrogateOptions& options,
                                const SurrogateSpec& spec, const AdoptCheck& check);

// One thread of its own (started with the first step, joined by the
// destructor) waits for every srun at once, through pidfds in an epoll set.
class SurrogateSteps {
 public:
  // Called on the object's thread when srun ended; `wait_status` as waitpid
  // gives it, -1 when srun could not be started or is no child of this
  // daemon. Never called after the object is destroyed.
  using OnEnd = std::function<void(const SurrogateSpec& spec, int wait_status)>;

  SurrogateSteps(SurrogateOptions options, OnEnd on_end);
  ~SurrogateSteps();  // later ends are no longer reported; steps keep running
  SurrogateSteps(const SurrogateSteps&) = delete;
  SurrogateSteps& operator=(const SurrogateSteps&) = delete;

  // Starts srun as the job's user and returns at once. Errors are reported
  // through OnEnd (-1), so the caller has one path for every end.
  void launch(const SurrogateSpec& spec);

  // After a restart: the srun a previous daemon started for `spec` is no
  // child of this one. It is found by its command line (surrogateArgv's,
  // whatever the step's name) and whyNotSurrogateSrun's checks, with the
  // job's ready time `ready_ns` as the earliest start, and its end is
  // reported through OnEnd, wait status -1 (unknown). A process that has the
  // command line but fails a check is logged and left alone: another user
  // copying it cannot end the step's appliance job. When there is none, the
  // step ended while no daemon watched, and OnEnd comes at once if
  // `gone_means_ended`; otherwise (the caller cannot tell it from an srun
  // Slurm refused) nothing is reported.
  void adopt(const SurrogateSpec& spec, int64_t ready_ns, bool gone_means_ended);

  // Sruns being waited for now (for tests).
  size_t waiting() const;

 private:
  // One srun waited for: `pidfd` readable once it ended; `child` > 0 when it
  // is this daemon's child, reaped for its wait status.
  struct Waited {
    SurrogateSpec spec;
    pid_t child = -1;
  };
  void watch(const SurrogateSpec& spec, pid_t child, int pidfd);
  void reportSoon(const SurrogateSpec& spec);
  bool startThread();
  void run();

  SurrogateOptions options_;
  OnEnd on_end_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd: ends to report at once, or stop
  mutable std::mutex mu_;
  std::unordered_map<int, Waited> waited_;  // by pidfd
  std::vector<SurrogateSpec> ended_;        // reported by the thread, wait status -1
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace accel::agentd
