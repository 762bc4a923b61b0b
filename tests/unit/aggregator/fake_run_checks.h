#pragma once
// Stand-ins for slurmctld in the aggregator's tests. Header only.
//   FakeRunChecks: RunChecks without a thread; the test reads the asks and
//     hands out the answers it wants, when it wants (Ingestor tests).
//   FakeJobRuns: JobRuns holding each job's run, or an error, as slurmctld
//     would answer; thread-safe, it counts the lookups (RunChecker tests).
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "accel/aggregator/job_runs.h"
#include "accel/aggregator/run_checks.h"

namespace accel::aggregator {

class FakeRunChecks final : public RunChecks {
 public:
  void ask(uint32_t job_id, int64_t after_ns) override { asks.emplace_back(job_id, after_ns); }
  std::vector<RunAnswer> take() override { return std::exchange(answers, {}); }
  // slurmctld says `job` runs run `restart_count` on `nodes`, as of `as_of_ns`.
  // `start_s`: when that run started (0: not known).
  void answer(uint32_t job, uint32_t restart_count, std::vector<std::string> nodes,
              int64_t as_of_ns, int64_t start_s = 0) {
    JobRun run{restart_count, true, std::move(nodes)};
    run.start_time_s = start_s;
    answers.push_back({job, true, std::move(run), as_of_ns});
  }

  std::vector<std::pair<uint32_t, int64_t>> asks;  // job, after_ns
  std::vector<RunAnswer> answers;                  // what the next take() returns
};

class FakeJobRuns final : public JobRuns {
 public:
  Result<JobRun> currentRun(uint32_t job_id) override {
    std::lock_guard lock(mu_);
    ++lookups_[job_id];
    auto it = runs_.find(job_id);
    if (it == runs_.end()) return Error(ErrorCode::kNotFound, "invalid job id");
    return it->second;
  }
  void set(uint32_t job_id, Result<JobRun> run) {
    std::lock_guard lock(mu_);
    runs_.insert_or_assign(job_id, std::move(run));
  }
  int lookups(uint32_t job_id) {
    std::lock_guard lock(mu_);
    return lookups_[job_id];
  }

 private:
  std::mutex mu_;
  std::map<uint32_t, Result<JobRun>> runs_;
  std::map<uint32_t, int> lookups_;
};

}  // namespace accel::aggregator
