#pragma once
// The aggregator's Accounting (accel/aggregator/accounting.h) through
// libslurmdb (slurmdbd), the only path that can change a job that has already
// finished (ARCHITECTURE.md §7). No Slurm header leaks out of this adapter;
// only accel-aggregatord's entry point (and the accounting bench) link it.
#include <memory>
#include <optional>
#include <string>

#include "accel/aggregator/accounting.h"

namespace accel::slurm {

class SlurmdbAccounting : public aggregator::Accounting {
 public:
  // `cluster`: ClusterName of slurm.conf; nullopt: asked from slurmctld on
  // first use. `slurm_conf`: path of slurm.conf, empty for Slurm's default.
  // `connections`: how many connections a batch of writes is spread over.
  SlurmdbAccounting(std::optional<std::string> cluster, std::string slurm_conf,
                    int connections = 1);
  ~SlurmdbAccounting() override;

  Result<std::map<uint32_t, aggregator::AccountedJob>> adminComments(
      const std::vector<uint32_t>& job_ids) override;
  std::vector<Status> setAdminComments(
      const std::vector<aggregator::CommentUpdate>& updates) override;

 private:
  Result<std::string> cluster();
  std::optional<std::string> cluster_;
  std::string slurm_conf_;
  int connections_ = 1;
};

}  // namespace accel::slurm
