#pragma once
// Follows the appliance jobs of the Slurm jobs on this node (Cerebras-style
// appliance, seed 000): reads the appliance's job list every interval while
// at least one job is live here, and reports each appliance job the first
// time it is seen and whenever its state or CS-X count changes. With no live
// job it does not poll at all (no idle wake-ups).
//
// The appliance is the source of truth, so nothing is persisted: a restarted
// daemon sees every appliance job again on its first poll. The times it
// reports are moved onto the node's clock (see onNodeClock): a start or end is
// kept within the window in which the node saw it happen.
//
// An appliance job counts for a Slurm job only when the appliance says the
// Slurm job's user submitted it (attribute): the label naming the Slurm job
// is the submitter's to write. Entries the agent cannot read fail closed for
// their own Slurm job only: it counts as using the appliance meanwhile.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "accel/appliance/appliance.h"
#include "accel/common/clock.h"
#include "accel/common/result.h"

namespace accel::agent {

// A Slurm job live on this node, and its user: whose appliance jobs count for it.
struct LiveJob {
  uint32_t id = 0;
  uint32_t uid = 0;
  std::string user;
  // A later run of a requeued job (SLURM_JOB_RESTART_COUNT > 0): the
  // appliance still lists the earlier runs' appliance jobs under the same
  // label. Those already over when the watcher first sees this run are
  // earlier runs' and are left out (see earlier_).
  bool later_run = false;
};

// At most this many appliance jobs are followed for one Slurm job; the rest
// of a longer list are one unreadable entry (the job counts as running).
inline constexpr size_t kMaxApplianceJobsPerJob = 64;
// The id the watcher gives the entry standing for what it could not read of
// a Slurm job's appliance jobs (not a valid appliance job id: never passed
// to the client, never given a step).
inline constexpr const char* kUnreadableEntry = "(unreadable)";

// What one listing means for the jobs live here.
struct Attribution {
  // Entries of live jobs submitted by those jobs' users, in listing order, at
  // most kMaxApplianceJobsPerJob a job plus, for a job with more, one nameless
  // unreadable entry in place of the rest. Unreadable entries are kept.
  std::vector<appliance::ApplianceJob> owned;
  // Entries labelled with a live job that its user did not submit, or whose
  // submitter the appliance did not report: they count for no job.
  std::vector<appliance::ApplianceJob> foreign;
};
// Pure: entries labelled with no live job are dropped.
Attribution attribute(std::vector<appliance::ApplianceJob> listed,
                      const std::vector<LiveJob>& live);

// Seconds during which at least one of `jobs` was running, up to `now_ns`
// (overlapping runs count once; queue time never counts).
double applianceSeconds(const std::vector<appliance::ApplianceJob>& jobs, int64_t now_ns);

class ApplianceWatcher {
 public:
  using LiveJobs = std::function<std::vector<LiveJob>()>;  // Slurm jobs live on this node
  using OnChange = std::function<void(const appliance::ApplianceJob& job)>;
  // An entry labelled with a live job that counts for none (Attribution::
  // foreign), told once while it stays listed, for the caller to log.
  using OnIgnored = std::function<void(const appliance::ApplianceJob& job)>;

  // Unreadable entries are reported through OnChange too: a placeholder
  // running from the poll that first saw it (id: the entry's name, or
  // kUnreadableEntry), or, for an entry followed before, what was last read
  // of it, unchanged. A placeholder that leaves the list is reported ended
  // (kFailed) at the poll that no longer sees it. The node's clock is
  // `clock`'s wall time; `clock` must outlive the watcher.
  ApplianceWatcher(std::shared_ptr<appliance::ApplianceClient> client,
                   std::chrono::milliseconds interval, LiveJobs live, OnChange on_change,
                   const Clock& clock, OnIgnored on_ignored = {});
  ~ApplianceWatcher();  // stops the thread

  void start();
  // Joins the thread: no poll and no callback after it returns. The
  // accessors and poke() stay safe to call until destruction.
  void stop();
  // A job became live or ended: poll now if the watcher was idle (with jobs
  // already live, the next interval's poll sees the change).
  void poke();
  // One poll; what the thread does each interval. Public for tests.
  Status pollOnce();

  std::vector<appliance::ApplianceJob> jobsOf(uint32_t slurm_job) const;
  double secondsOf(uint32_t slurm_job) const;
  // The last poll's failure, empty after a good poll.
  std::string lastError() const;

 private:
  void run();
  appliance::ApplianceJob onNodeClock(appliance::ApplianceJob job,
                                      const appliance::ApplianceJob* old,
                                      int64_t answered_ns) const;
  static appliance::ApplianceJob unreadable(appliance::ApplianceJob raw, const std::string& id,
                                            const appliance::ApplianceJob* old,
                                            int64_t answered_ns);

  std::shared_ptr<appliance::ApplianceClient> client_;
  std::chrono::milliseconds interval_;
  LiveJobs live_;
  OnChange on_change_;
  const Clock& clock_;
  OnIgnored on_ignored_;

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  using Key =
      std::pair<uint32_t, std::string>;  // Slurm job, appliance job id (or kUnreadableEntry)
  std::map<Key, appliance::ApplianceJob> tracked_;  // times on the node's clock
  std::set<Key> ignored_;                           // foreign entries already told, still listed
  int64_t prev_asked_ns_ = 0;     // when the last good poll asked (node clock); 0: none yet
  std::set<uint32_t> live_prev_;  // the Slurm jobs that poll covered
  // For a later run of a requeued job: the appliance jobs that were over
  // when the first poll of this run saw them, which belong to earlier runs.
  // The first poll comes right after the prolog (poke), before the job's
  // script runs. After a restart of the daemon in such a run, its own
  // finished appliance jobs are left out of this view too; their time stays
  // in the job's record, which the limit reads.
  std::map<uint32_t, std::set<std::string>> earlier_;
  std::string last_error_;
  bool poked_ = false;
  bool polling_ = false;  // the last round had live jobs: the next poll is due anyway
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace accel::agent
