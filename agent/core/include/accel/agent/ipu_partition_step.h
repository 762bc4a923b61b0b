#pragma once
// The job's V-IPU partition and its IPUoF files (jobs that asked for --ipus).
//
// On the job's leader (job_nodes.h: the first node of its node list, or the
// only one), at prolog: makes partition p<job id> with the job's IPUs, one GCD
// per task on the node and the replicas asked for. On every node: writes each
// GCD's IPUoF configuration as <job dir>/ipuof-gcd<N>.conf (0600, the job's
// user) and exports IPUOF_CONFIG_PATH (GCD 0; the SPANK plugin points each
// task at its own GCD), ACCEL_IPUOF_DIR, ACCEL_IPUOF_GCDS and the
// IPUOF_VIPU_API_* variables. At epilog the leader removes the partition
// (already gone is success); a follower leaves it, and its files go with the
// job directory.
//
// A follower never makes or removes the partition: it asks the controller
// for it every `interval` until it is there (the leader made it) and takes
// whatever GCDs it has. If it is still missing after the wait budget, the
// leader's prolog failed or is late: the job fails with kInvalidArgument,
// which keeps this node in service (Slurm drains the leader if its failure
// was the node's; the leader's epilog, which Slurm runs after any failed
// prolog, removes what it made).
//
// The partition name depends on the job id only, so a leader whose create
// finds the name taken (an earlier attempt's leftover) removes it and makes
// it again, and an epilog whose record was lost still finds it. Runs after the job directory step,
// which owns the files.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

#include "accel/agent/job_step.h"
#include "accel/common/clock.h"
#include "accel/common/vipu_config.h"
#include "accel/ipu/partition_controller.h"

namespace accel::agent {

// How a follower waits for the leader's partition.
struct FollowerWait {
  // How long to wait in all; read at each prolog (HookTimeout may be reloaded).
  std::function<std::chrono::milliseconds()> budget;
  // Polls start `first_interval` apart and grow by half each time up to
  // `interval`: a partition that the leader makes in milliseconds (its prolog
  // started at the same moment) is seen within a few of them, and a slow
  // controller is not asked more than every `interval`.
  std::chrono::milliseconds first_interval{3};
  std::chrono::milliseconds interval{150};
  // The first ask waits three quarters of this node's last follower wait
  // (at most `interval`): a question asked before the leader can have made
  // the partition is a process start wasted on a busy moment of the job.
  // Until a wait has been seen (and after one that found it at once) the
  // first ask is at once.

  // What the wait is timed on (its monotonic time) and sleeps on; tests give
  // their own. Must outlive the step.
  const Clock* clock = &systemClock();
};

class IpuPartitionStep : public JobStep {
 public:
  static constexpr std::chrono::milliseconds kDefaultFollowerWait{10'000};

  IpuPartitionStep(std::shared_ptr<ipu::PartitionController> controller, VipuConfig config,
                   FollowerWait wait = {});
  std::string_view name() const override { return "IPU partition"; }
  Status setUp(JobRecord& job) override;
  Status tearDown(const JobRecord& job) override;

  static std::string partitionName(uint32_t job_id) { return "p" + std::to_string(job_id); }
  static std::string configFile(const std::string& job_dir, uint32_t gcd) {
    return job_dir + "/ipuof-gcd" + std::to_string(gcd) + ".conf";
  }

 private:
  Status makePartition(JobRecord& job, const std::string& name);
  Status followPartition(JobRecord& job, const std::string& name);
  Result<std::vector<ipu::GcdConfig>> awaitPartition(const JobRecord& job, const std::string& name);
  Status writeConfigs(JobRecord& job, const std::vector<ipu::GcdConfig>& configs);
  void exportEnv(JobRecord& job, const std::string& name, size_t gcds) const;
  std::string where() const { return " (" + controller_->describe() + ")"; }

  std::shared_ptr<ipu::PartitionController> controller_;
  VipuConfig config_;
  FollowerWait wait_;
  std::atomic<int64_t> last_wait_ms_{0};  // this node's last follower wait that succeeded
};

}  // namespace accel::agent
