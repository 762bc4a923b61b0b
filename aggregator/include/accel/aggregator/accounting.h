#pragma once
// The seam to Slurm accounting: read and replace one finished job's
// AdminComment. SlurmdbAccounting (slurmdb_accounting.h) talks to slurmdbd;
// FakeAccounting (fake_accounting.h) holds the comments in memory for tests.
#include <cstdint>
#include <string>

#include "accel/common/result.h"

namespace accel::aggregator {

class Accounting {
 public:
  virtual ~Accounting() = default;
  // The job's current AdminComment ("" when it has none).
  // Errors: kNotFound (slurmdbd has no record of the job yet: retry later),
  // kUnavailable (slurmdbd or slurmctld cannot be reached: retry later).
  virtual Result<std::string> adminComment(uint32_t job_id) = 0;
  // Replaces the job's AdminComment with `comment`; errors as above.
  virtual Status setAdminComment(uint32_t job_id, const std::string& comment) = 0;
};

}  // namespace accel::aggregator
