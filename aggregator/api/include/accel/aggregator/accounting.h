#pragma once
// The seam to Slurm accounting: read and replace finished jobs'
// AdminComments, a batch at a time. A target of its own (accel_aggregator_api)
// without any Slurm header: the aggregator codes against it, and
// slurm::SlurmdbAccounting (slurm/accounting/) implements it over slurmdbd;
// FakeAccounting (tests/support/fake_accounting.h) holds the comments in
// memory for tests.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "accel/common/result.h"

namespace accel::aggregator {

// What slurmdbd holds of one job (its latest record): its AdminComment (""
// when it has none) and whether that record shows a run in progress (state
// RUNNING or SUSPENDED). While it does, slurmctld's completion record is
// still to come, and it carries slurmctld's own copy of the AdminComment,
// which replaces slurmdbd's: a write then could be lost, or could lose what
// another tool set while the job ran. A requeued job's latest record is its
// next run, PENDING: the run before has ended.
struct AccountedJob {
  std::string admin_comment;
  bool running = false;
};

struct CommentUpdate {
  uint32_t job_id = 0;
  std::string comment;
};

class Accounting {
 public:
  virtual ~Accounting() = default;
  // What slurmdbd holds of each of `job_ids` it has a record of, in one
  // query; a job it has no record of yet is absent from the map. Errors:
  // kUnavailable (slurmdbd or slurmctld cannot be reached: retry later).
  virtual Result<std::map<uint32_t, AccountedJob>> adminComments(
      const std::vector<uint32_t>& job_ids) = 0;
  // Replaces each job's AdminComment, over one connection committed once.
  // One status per update, in order: kNotFound (slurmdbd has no record of
  // the job), kUnavailable (slurmdbd cannot be reached); both: retry later.
  virtual std::vector<Status> setAdminComments(const std::vector<CommentUpdate>& updates) = 0;
};

}  // namespace accel::aggregator
