#include "accel/agent/ipu_partition_step.h"

#include "accel/common/safe_file.h"

namespace accel::agent {

Status IpuPartitionStep::writeConfigs(JobRecord& job, const std::vector<ipu::GcdConfig>& configs) {
  FileOwner owner{job.spec.uid, job.spec.gid};
  for (const auto& gcd : configs)
    ACCEL_TRY(writeFileAtomic(configFile(job.job_dir, gcd.gcd), gcd.config, 0600, owner));
  return okStatus();
}

Status IpuPartitionStep::setUp(JobRecord& job) {
  if (job.spec.ipus == 0) return okStatus();
  if (job.job_dir.empty()) return Error(ErrorCode::kInternal, "IPU partition: the job has no directory");
  const std::string name = partitionName(job.spec.job_id);
  const std::string where = " (" + controller_->describe() + ")";
  // A partition left by an earlier attempt may have other sizes: start clean.
  ACCEL_TRY(controller_->remove(name).context("removing leftover partition " + name + where));
  ipu::PartitionSpec spec{.name = name,
                          .ipus = job.spec.ipus,
                          .gcds = std::max<uint32_t>(job.spec.ntasks, 1),
                          .replicas = job.spec.num_replicas};
  ACCEL_TRY(controller_->create(spec).context("creating partition " + name + where));
  job.ipu_partition = name;  // from here on, a failure must remove it
  auto configs = controller_->ipuofConfigs(name);
  if (!configs.ok()) return configs.error().context("IPUoF configuration of " + name + where);
  if (configs->size() != spec.gcds)
    return Error(ErrorCode::kIo, "partition " + name + where + " has " + std::to_string(configs->size()) +
                                     " GCDs, asked for " + std::to_string(spec.gcds));
  ACCEL_TRY(writeConfigs(job, *configs));
  job.env.emplace_back("IPUOF_CONFIG_PATH", configFile(job.job_dir, 0));
  job.env.emplace_back("ACCEL_IPUOF_DIR", job.job_dir);
  job.env.emplace_back("ACCEL_IPUOF_GCDS", std::to_string(spec.gcds));
  job.env.emplace_back("IPUOF_VIPU_API_HOST", config_.api_host);
  job.env.emplace_back("IPUOF_VIPU_API_PORT", std::to_string(config_.api_port));
  job.env.emplace_back("IPUOF_VIPU_API_PARTITION_ID", name);
  return okStatus();
}

Status IpuPartitionStep::tearDown(const JobRecord& job) {
  // A record without IPUs made no partition, unless it is the empty record
  // of a job whose record was lost (no prolog time): then look by name.
  bool lost_record = job.prolog_started_ns == 0;
  if (job.spec.ipus == 0 && job.ipu_partition.empty() && !lost_record) return okStatus();
  const std::string name = partitionName(job.spec.job_id);
  auto removed = controller_->remove(name);
  if (!removed.ok() && lost_record && job.spec.ipus == 0) {
    // Nothing says this job ever had IPUs; a controller outage must not fail
    // (and drain the node for) the epilog of what was most likely a CPU job.
    return okStatus();
  }
  return removed.context("removing partition " + name + " (" + controller_->describe() + ")");
}

}  // namespace accel::agent
