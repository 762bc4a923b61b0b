#pragma once
// Drains this node in Slurm, with a reason, when a prolog finds that the
// cluster's configuration sends the node jobs it can never serve
// (agent::KindFault: an IPU job on a node without IPUs). The hook itself
// exits 0 (the job fails, as for a user's mistake), so Slurm does not drain
// the node; left in service, it would fail every such job sent to it.
//
// Asynchronous: drainOnce() only queues, and one worker thread makes the
// calls in order, each bounded by the drain function (the daemon's runs
// libslurm in a child process killed after a deadline). A hook never waits
// for slurmctld. Once per job: a prolog of the same job run again does not
// drain again (kept in memory for the last kRemembered jobs; a restarted
// daemon forgets, and draining a drained node only sets the reason again).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "accel/common/result.h"

namespace accel::agentd {

class NodeDrainer {
 public:
  static constexpr size_t kRemembered = 1024;
  using DrainFn = std::function<Status(const std::string& node, const std::string& reason)>;
  // Told the outcome of each drain, on the worker thread (unset: only logged).
  using DoneFn =
      std::function<void(uint32_t job_id, const std::string& node, const Status& outcome)>;

  explicit NodeDrainer(DrainFn drain, DoneFn done = {});
  // Drains not yet begun are dropped (and logged); one under way is waited
  // for, as long as the drain function's own bound.
  ~NodeDrainer();
  NodeDrainer(const NodeDrainer&) = delete;
  NodeDrainer& operator=(const NodeDrainer&) = delete;

  // Queues a drain of `node` for job `job_id`. False when this job has
  // already asked for one: nothing is queued.
  bool drainOnce(uint32_t job_id, const std::string& node, const std::string& reason);
  // Queues a drain of `node` that is not tied to one job's prolog (a GPU's
  // hardware fault): asked for each time. `job_id` only names the job in
  // the log (0: none).
  void drain(uint32_t job_id, const std::string& node, const std::string& reason);
  // Returns once every queued drain has ended (for tests).
  void waitIdle();

 private:
  struct Pending {
    uint32_t job_id;
    std::string node;
    std::string reason;
  };
  void run();

  DrainFn drain_;
  DoneFn done_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  bool busy_ = false;
  bool stop_ = false;
  std::set<uint32_t> asked_;
  std::deque<uint32_t> asked_order_;  // oldest first, to forget beyond kRemembered
  std::thread worker_;                // last: starts once the rest exists
};

}  // namespace accel::agentd
