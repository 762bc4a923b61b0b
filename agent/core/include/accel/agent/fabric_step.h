#pragma once
// The job's fabric (agent/fabric): link up, MTU, addresses and routes on
// the NICs chosen for the job, and their exact removal. The manager keeps its
// own ledger, so teardown needs only the job id, also after a daemon restart.
// Tasks get ACCEL_FABRIC_NICS, ACCEL_FABRIC_ADDRESSES, ACCEL_FABRIC_PREFIX and
// ACCEL_FABRIC_MTU.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "accel/agent/job_step.h"
#include "accel/fabric/manager.h"

namespace accel::agent {

class FabricStep : public JobStep {
 public:
  // The job's NICs (chosen from the topology); empty: the job has no fabric.
  using NicChooser = std::function<Result<std::vector<std::string>>(const JobRecord&)>;

  FabricStep(std::unique_ptr<fabric::FabricManager> manager, NicChooser choose)
      : manager_(std::move(manager)), choose_(std::move(choose)) {}
  std::string_view name() const override { return "fabric"; }
  Status setUp(JobRecord& job) override;
  Status tearDown(const JobRecord& job) override;

 private:
  std::unique_ptr<fabric::FabricManager> manager_;
  NicChooser choose_;
};

}  // namespace accel::agent
