#pragma once
// Accounting through libslurmdb (slurmdbd), the only path that can change a
// job that has already finished (ARCHITECTURE.md §7). No Slurm header leaks
// out of this adapter.
#include <memory>
#include <optional>
#include <string>

#include "accel/aggregator/accounting.h"

namespace accel::aggregator {

class SlurmdbAccounting : public Accounting {
 public:
  // `cluster`: ClusterName of slurm.conf; nullopt: asked from slurmctld on
  // first use. `slurm_conf`: path of slurm.conf, empty for Slurm's default.
  SlurmdbAccounting(std::optional<std::string> cluster, std::string slurm_conf);
  ~SlurmdbAccounting() override;

  Result<std::string> adminComment(uint32_t job_id) override;
  Status setAdminComment(uint32_t job_id, const std::string& comment) override;

 private:
  Result<std::string> cluster();
  std::optional<std::string> cluster_;
  std::string slurm_conf_;
};

}  // namespace accel::aggregator
