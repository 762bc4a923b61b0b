#pragma once
// slurmctld's word on a job's current run, asked for off the ingest thread.
// The ingest thread asks (never blocking) and takes the answers that have
// come; RunChecker makes the lookups on a thread of its own, one at a time,
// and keeps each answer for a while so that the nodes of one run, or a
// flood of claims about one job, cost one lookup.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "accel/aggregator/job_runs.h"
#include "accel/aggregator/metrics.h"
#include "accel/common/clock.h"

namespace accel::aggregator {

struct RunAnswer {
  uint32_t job_id = 0;
  bool found = false;  // slurmctld knows the job; `run` is what it said
  JobRun run;
  // CLOCK_REALTIME when the lookup was sent: slurmctld's view is at least
  // this recent, so it already knew every run whose prolog reported earlier.
  int64_t as_of_ns = 0;
  bool operator==(const RunAnswer&) const = default;
};

class RunChecks {
 public:
  virtual ~RunChecks() = default;
  // Wants an answer about `job_id` that slurmctld gave no earlier than
  // `after_ns`. Never blocks. The answer known already, however old, is
  // handed out by the next take() (an old answer can confirm a run, not
  // disprove it); a lookup is made when that answer is older than `after_ns`.
  virtual void ask(uint32_t job_id, int64_t after_ns) = 0;
  // The answers that came since the last call, the latest one per job.
  // Never blocks.
  virtual std::vector<RunAnswer> take() = 0;
};

// RunChecks over slurmctld (JobRuns). A job is looked up at most once per
// min_interval, however often it is asked about; when slurmctld does not
// answer, again after a delay that doubles from retry_min to retry_max
// (counted in Metrics::slurmctld_failures), for as long as it is wanted.
// At most max_jobs jobs are known at once: an ask beyond that is dropped,
// and the asker asks again later.
class RunChecker final : public RunChecks {
 public:
  struct Options {
    std::chrono::milliseconds min_interval{1000};
    std::chrono::milliseconds retry_min{1000};
    std::chrono::milliseconds retry_max{30000};
    std::chrono::seconds keep{120};  // an answer is forgotten this long after it came
    size_t max_jobs = 4096;
    // The longest the thread sleeps while a wanted job waits for its time: a
    // test's clock moves without waking it.
    std::chrono::milliseconds recheck{1000};
  };
  using Factory = std::function<std::unique_ptr<JobRuns>()>;
  // `make_runs` is called once, on the checker's thread, before its first
  // lookup (libslurm is started there, not on the caller's thread).
  RunChecker(Factory make_runs, const Clock& clock, Metrics& metrics, Options options);
  RunChecker(Factory make_runs, const Clock& clock, Metrics& metrics)
      : RunChecker(std::move(make_runs), clock, metrics, Options{}) {}
  // Waits for the lookup in progress, if any.
  ~RunChecker() override;
  RunChecker(const RunChecker&) = delete;
  RunChecker& operator=(const RunChecker&) = delete;

  void ask(uint32_t job_id, int64_t after_ns) override;
  std::vector<RunAnswer> take() override;

 private:
  static constexpr int64_t kNotWanted = std::numeric_limits<int64_t>::min();
  struct Job {
    std::optional<RunAnswer> answer;
    int64_t wanted_after_ns = kNotWanted;  // an answer no older than this is wanted
    int64_t next_lookup_mono = 0;          // no lookup of it before (interval, retries)
    int64_t retry_ns = 0;                  // the delay after the next failure
  };
  void run();
  // A wanted job whose lookup may be made now, or how long until one may.
  std::optional<uint32_t> nextDue(int64_t now_mono, int64_t* wait_ns);
  void lookUp(std::unique_lock<std::mutex>& lock, uint32_t job_id);
  void forgetOld(int64_t now_wall);

  Factory make_runs_;
  std::unique_ptr<JobRuns> runs_;  // the checker's thread only
  const Clock& clock_;
  Metrics& metrics_;
  Options options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint32_t, Job> jobs_;
  std::map<uint32_t, RunAnswer> ready_;
  bool stop_ = false;
  std::thread thread_;  // last: it uses the members above
};

}  // namespace accel::aggregator
