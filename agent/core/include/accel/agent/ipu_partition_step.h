#pragma once
// The job's V-IPU partition and its IPUoF files (jobs that asked for --ipus).
// At prolog: makes partition p<job id> with the job's IPUs, one GCD per task
// on the node and the replicas asked for; writes each GCD's IPUoF
// configuration as <job dir>/ipuof-gcd<N>.conf (0600, the job's user) and
// exports IPUOF_CONFIG_PATH (GCD 0; the SPANK plugin points each task at its
// own GCD), ACCEL_IPUOF_DIR, ACCEL_IPUOF_GCDS and the IPUOF_VIPU_API_*
// variables. At epilog: removes the partition (already gone is success).
//
// The partition name depends on the job id only, so a retried prolog first
// removes what an earlier attempt left, and an epilog whose record was lost
// still finds it. Runs after the job directory step, which owns the files.
#include <memory>

#include "accel/agent/job_step.h"
#include "accel/common/vipu_config.h"
#include "accel/ipu/partition_controller.h"

namespace accel::agent {

class IpuPartitionStep : public JobStep {
 public:
  IpuPartitionStep(std::shared_ptr<ipu::PartitionController> controller, VipuConfig config)
      : controller_(std::move(controller)), config_(std::move(config)) {}
  std::string_view name() const override { return "IPU partition"; }
  Status setUp(JobRecord& job) override;
  Status tearDown(const JobRecord& job) override;

  static std::string partitionName(uint32_t job_id) { return "p" + std::to_string(job_id); }
  static std::string configFile(const std::string& job_dir, uint32_t gcd) {
    return job_dir + "/ipuof-gcd" + std::to_string(gcd) + ".conf";
  }

 private:
  Status writeConfigs(JobRecord& job, const std::vector<ipu::GcdConfig>& configs);

  std::shared_ptr<ipu::PartitionController> controller_;
  VipuConfig config_;
};

}  // namespace accel::agent
