#pragma once
// What the control handlers ask of the node's appliance work: the appliance
// jobs and seconds of a Slurm job, and two notices. ApplianceService
// implements it; handler tests give a fake. A handler context without one
// means the node reads no appliance.
#include <cstdint>
#include <string>
#include <vector>

#include "accel/appliance/appliance.h"

namespace accel::agentd {

class ApplianceView {
 public:
  virtual ~ApplianceView() = default;
  virtual std::vector<appliance::ApplianceJob> jobsOf(uint32_t job_id) const = 0;
  virtual double secondsOf(uint32_t job_id) const = 0;
  // A prolog or epilog changed the set of live jobs.
  virtual void jobsChanged() = 0;
  // A surrogate step's waiter reported: its step was made.
  virtual void surrogateStarted(const std::string& appliance_job) = 0;
};

}  // namespace accel::agentd
