#pragma once
// The agent's Slurmctld (accel/agentd/slurmctld.h) through libslurm, in
// this process. No Slurm header leaks out of this adapter.
#include <cstdint>
#include <string>

#include "accel/agentd/slurmctld.h"

namespace accel::slurm {

class LibslurmSlurmctld : public agentd::Slurmctld {
 public:
  // Calls are serialised: libslurm keeps process-wide state (its config,
  // the auth plugin).
  Result<agentd::JobPresence> jobPresence(uint32_t job_id) override;
  Status drainNode(const std::string& node, const std::string& reason) override;
  Status signalJob(uint32_t job_id, int sig, bool steps_only) override;
  Result<agentd::JobOutput> jobOutput(uint32_t job_id) override;
  Status notifyJob(uint32_t job_id, const std::string& text) override;
};

// The decision of jobPresence from the job_state slurmctld reported (as in
// slurm_job_info_t), for tests.
agentd::JobPresence presenceFromState(uint32_t job_state);

}  // namespace accel::slurm
