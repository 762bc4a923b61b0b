#include "accel/agent/ipu_partition_step.h"

#include "accel/agent/job_nodes.h"
#include "accel/common/safe_file.h"

namespace accel::agent {
namespace {

using std::chrono::milliseconds;

// "15 s", "2.5 s": how long a follower waited, for its message.
std::string seconds(milliseconds ms) {
  std::string s = std::to_string(ms.count() / 1000);
  if (ms.count() % 1000 != 0) s += "." + std::to_string(ms.count() % 1000 / 100);
  return s + " s";
}

}  // namespace

IpuPartitionStep::IpuPartitionStep(std::shared_ptr<ipu::PartitionController> controller,
                                   VipuConfig config, FollowerWait wait)
    : controller_(std::move(controller)), config_(std::move(config)), wait_(std::move(wait)) {}

Status IpuPartitionStep::writeConfigs(JobRecord& job, const std::vector<ipu::GcdConfig>& configs) {
  FileOwner owner{job.spec.uid, job.spec.gid};
  for (const auto& gcd : configs)
    ACCEL_TRY(writeFileAtomic(configFile(job.job_dir, gcd.gcd), gcd.config, 0600, owner));
  return okStatus();
}

// The same variables on every node of the job.
void IpuPartitionStep::exportEnv(JobRecord& job, const std::string& name, size_t gcds) const {
  job.env.emplace_back("IPUOF_CONFIG_PATH", configFile(job.job_dir, 0));
  job.env.emplace_back("ACCEL_IPUOF_DIR", job.job_dir);
  job.env.emplace_back("ACCEL_IPUOF_GCDS", std::to_string(gcds));
  job.env.emplace_back("IPUOF_VIPU_API_HOST", config_.api_host);
  job.env.emplace_back("IPUOF_VIPU_API_PORT", std::to_string(config_.api_port));
  job.env.emplace_back("IPUOF_VIPU_API_PARTITION_ID", name);
}

Status IpuPartitionStep::setUp(JobRecord& job) {
  if (job.spec.ipus == 0) return okStatus();
  if (job.job_dir.empty())
    return Error(ErrorCode::kInternal, "IPU partition: the job has no directory");
  const std::string name = partitionName(job.spec.job_id);
  return leadsJob(job.spec) ? makePartition(job, name) : followPartition(job, name);
}

Status IpuPartitionStep::makePartition(JobRecord& job, const std::string& name) {
  ipu::PartitionSpec spec{.name = name,
                          .ipus = job.spec.ipus,
                          .gcds = std::max<uint32_t>(job.spec.ntasks, 1),
                          .replicas = job.spec.num_replicas};
  auto created = controller_->create(spec);
  if (!created.ok() && created.error().code() == ErrorCode::kConflict) {
    // Left by an earlier attempt of this job (a requeue, a prolog retried
    // after a crash), perhaps with other sizes: start clean. Asking first
    // would cost every job a controller call that almost never finds one.
    ACCEL_TRY(controller_->remove(name).context("removing leftover partition " + name + where()));
    created = controller_->create(spec);
  }
  ACCEL_TRY(created.context("creating partition " + name + where()));
  job.ipu_partition = name;  // from here on, a failure must remove it
  auto configs = controller_->ipuofConfigs(name);
  if (!configs.ok()) return configs.error().context("IPUoF configuration of " + name + where());
  if (configs->size() != spec.gcds)
    return Error(ErrorCode::kIo, "partition " + name + where() + " has " +
                                     std::to_string(configs->size()) + " GCDs, asked for " +
                                     std::to_string(spec.gcds));
  ACCEL_TRY(writeConfigs(job, *configs));
  exportEnv(job, name, spec.gcds);
  return okStatus();
}

// Polls until the leader's partition is there. "Not found" is the only
// answer worth waiting on; any other failure is the controller's (VipuCli
// has already retried the transient ones) and ends the wait as it would end
// the leader's prolog.
Result<std::vector<ipu::GcdConfig>> IpuPartitionStep::awaitPartition(const JobRecord& job,
                                                                     const std::string& name) {
  const milliseconds budget = wait_.budget ? wait_.budget() : kDefaultFollowerWait;
  const auto begun = wait_.clock->steadyNow();
  const auto deadline = begun + budget;
  const milliseconds first =
      std::min({milliseconds(last_wait_ms_.load() * 3 / 4), wait_.interval, budget});
  if (first.count() > 0) wait_.clock->sleepFor(first);
  milliseconds pause = std::min(wait_.first_interval, wait_.interval);
  for (;;) {
    auto configs = controller_->ipuofConfigs(name);
    if (configs.ok()) {
      last_wait_ms_ =
          std::chrono::duration_cast<milliseconds>(wait_.clock->steadyNow() - begun).count();
      return configs;
    }
    if (configs.error().code() != ErrorCode::kNotFound)
      return configs.error().context("IPUoF configuration of " + name + where());
    auto left = std::chrono::duration_cast<milliseconds>(deadline - wait_.clock->steadyNow());
    if (left.count() <= 0) break;
    wait_.clock->sleepFor(std::min(pause, left));
    pause = std::min(wait_.interval, pause + std::max(pause / 2, milliseconds(1)));
  }
  return Error(ErrorCode::kInvalidArgument,
               "partition " + name + " was not made by the job's first node " +
                   jobLeader(job.spec) + " within " + seconds(budget) + where());
}

Status IpuPartitionStep::followPartition(JobRecord& job, const std::string& name) {
  auto configs = awaitPartition(job, name);
  if (!configs.ok()) return configs.error();
  job.ipu_partition = name;  // the job's; the leader's to remove
  ACCEL_TRY(writeConfigs(job, *configs));
  exportEnv(job, name, configs->size());
  return okStatus();
}

Status IpuPartitionStep::tearDown(const JobRecord& job) {
  // A record without IPUs made no partition, unless it is the empty record
  // of a job whose record was lost (no prolog time): then look by name.
  bool lost_record = job.prolog_started_ns == 0;
  if (job.spec.ipus == 0 && job.ipu_partition.empty() && !lost_record) return okStatus();
  // A follower's files go with the job directory; the partition is the
  // leader's (a lost record knows no node list: it is removed by name).
  if (!leadsJob(job.spec)) return okStatus();
  const std::string name = partitionName(job.spec.job_id);
  auto removed = controller_->remove(name);
  if (!removed.ok() && lost_record && job.spec.ipus == 0) {
    // Nothing says this job ever had IPUs; a controller outage must not fail
    // (and drain the node for) the epilog of what was most likely a CPU job.
    return okStatus();
  }
  return removed.context("removing partition " + name + where());
}

}  // namespace accel::agent
