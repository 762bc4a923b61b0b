#include "accel/agent/fabric_step.h"

namespace accel::agent {

Status FabricStep::setUp(JobRecord& job) {
  auto nics = choose_(job);
  ACCEL_TRY(nics);
  if (nics->empty()) return okStatus();
  auto fabric = manager_->setUp(job.spec.job_id, *nics);
  ACCEL_TRY(fabric);
  for (auto& kv : fabric::fabricEnvironment(*fabric)) job.env.push_back(std::move(kv));
  return okStatus();
}

Status FabricStep::tearDown(const JobRecord& job) { return manager_->tearDown(job.spec.job_id); }

}  // namespace accel::agent
