#pragma once
// The seam to Slurm accounting: read and replace finished jobs'
// AdminComments, a batch at a time. SlurmdbAccounting (slurmdb_accounting.h)
// talks to slurmdbd; FakeAccounting (fake_accounting.h) holds the comments in
// memory for tests.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "accel/common/result.h"

namespace accel::aggregator {

// What slurmdbd holds of one job: its AdminComment ("" when it has none) and
// whether slurmctld's record of the job's end has reached it. Until it has,
// slurmctld may still replace the AdminComment with its own copy (the job's
// completion record carries it), so a write then could be lost or could
// lose what another tool set while the job ran.
struct AccountedJob {
  std::string admin_comment;
  bool ended = false;
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
  virtual Result<std::map<uint32_t, AccountedJob>> adminComments(const std::vector<uint32_t>& job_ids) = 0;
  // Replaces each job's AdminComment, over one connection committed once.
  // One status per update, in order: kNotFound (slurmdbd has no record of
  // the job), kUnavailable (slurmdbd cannot be reached); both: retry later.
  virtual std::vector<Status> setAdminComments(const std::vector<CommentUpdate>& updates) = 0;
};

}  // namespace accel::aggregator
