#pragma once
// Persists job records, one file per job (<dir>/<job_id>.json, root-only).
// Writes are atomic renames: a crash leaves the previous record or the new
// one. The directory lives in the run directory: job records describe
// resources that do not outlive the boot, and a rename is already durable
// against a daemon crash (see Durability in safe_file.h).
#include <cstdint>
#include <string>
#include <vector>

#include "accel/agent/job_record.h"
#include "accel/common/result.h"

namespace accel::agent {

class JobStore {
 public:
  explicit JobStore(std::string dir) : dir_(std::move(dir)) {}

  // Creates the directory (0700) if missing.
  Status open();
  Status save(const JobRecord& record);
  Status remove(uint32_t job_id);

  struct Loaded {
    std::vector<JobRecord> records;
    std::vector<std::string> problems;  // unreadable files, named; left in place
  };
  // Every record in the directory. A corrupt file is reported, not fatal:
  // one bad record must not keep the node's other jobs from being re-adopted.
  Result<Loaded> loadAll() const;

  const std::string& dir() const { return dir_; }

 private:
  std::string pathOf(uint32_t job_id) const;
  std::string dir_;
};

}  // namespace accel::agent
