#pragma once
// One lock per job id, which exists only while some call holds it or waits
// for it: calls for one job are serialized, calls for different jobs never
// wait for each other (a striped lock would make one job's slow controller
// call hold up an unrelated job that happens to share its stripe), and the
// memory is bounded by the calls in progress, not by the job ids ever seen.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace accel::agent {

class JobLocks {
 public:
  class Guard {
   public:
    Guard(JobLocks& locks, uint32_t job_id);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    JobLocks& locks_;
    uint32_t job_id_;
  };

  // Jobs with a lock entry right now (held or waited for): for tests.
  size_t entries() const;

 private:
  struct Entry {
    bool held = false;
    uint32_t waiters = 0;
  };
  mutable std::mutex mu_;
  std::condition_variable released_;
  std::unordered_map<uint32_t, Entry> entries_;
};

}  // namespace accel::agent
