#pragma once
// One kind of per-job resource the prolog makes and the epilog removes (the
// job's directory, its accelerator partition, its fabric addresses, ...).
// Contract, which makes prolog retries and epilog-after-crash safe:
//  - setUp may be called again after a partial failure or a crash; it first
//    cleans whatever an earlier attempt left, or adopts it if complete.
//  - tearDown is idempotent: removing what is already gone is success, and it
//    works from the persisted record alone (after a daemon restart).
//  - neither blocks past its own time bound.
#include <string_view>

#include "accel/agent/job_record.h"
#include "accel/common/result.h"

namespace accel::agent {

class JobStep {
 public:
  virtual ~JobStep() = default;
  virtual std::string_view name() const = 0;
  // May fill record fields (job_dir, env, ...) that the record then persists.
  virtual Status setUp(JobRecord& job) = 0;
  virtual Status tearDown(const JobRecord& job) = 0;
  // The epilog's first act, before it writes anything: gives back space the
  // job's user can fill (a job directory's own file system). Idempotent, as
  // tearDown, which runs later and finishes the work.
  virtual Status release(const JobRecord&) { return okStatus(); }
};

}  // namespace accel::agent
