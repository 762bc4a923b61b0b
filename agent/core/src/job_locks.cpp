#include "accel/agent/job_locks.h"

namespace accel::agent {

JobLocks::Guard::Guard(JobLocks& locks, uint32_t job_id) : locks_(locks), job_id_(job_id) {
  std::unique_lock<std::mutex> g(locks_.mu_);
  Entry& e = locks_.entries_[job_id];
  ++e.waiters;
  // One condition variable for all jobs: a release wakes every waiter, and
  // those of other jobs go back to sleep. Waiters are the hook calls in
  // flight, a handful; a variable per entry would cost more than it saves.
  locks_.released_.wait(g, [&] { return !locks_.entries_[job_id].held; });
  Entry& mine = locks_.entries_[job_id];
  --mine.waiters;
  mine.held = true;
}

JobLocks::Guard::~Guard() {
  {
    std::lock_guard<std::mutex> g(locks_.mu_);
    auto it = locks_.entries_.find(job_id_);
    it->second.held = false;
    if (it->second.waiters == 0) locks_.entries_.erase(it);
  }
  locks_.released_.notify_all();
}

size_t JobLocks::entries() const {
  std::lock_guard<std::mutex> g(mu_);
  return entries_.size();
}

}  // namespace accel::agent
