#pragma once
// In-memory accounting for tests: jobs must be added before they can be
// written (as slurmdbd knows only jobs slurmctld has reported), and the
// whole service can be made unreachable to test retries and back-fill.
#include <map>
#include <mutex>

#include "accel/aggregator/accounting.h"

namespace accel::aggregator {

class FakeAccounting : public Accounting {
 public:
  void addJob(uint32_t job_id, std::string comment = "") {
    std::lock_guard lock(mu_);
    comments_[job_id] = std::move(comment);
  }
  void setReachable(bool reachable) {
    std::lock_guard lock(mu_);
    reachable_ = reachable;
  }
  std::string comment(uint32_t job_id) const {
    std::lock_guard lock(mu_);
    auto it = comments_.find(job_id);
    return it == comments_.end() ? std::string() : it->second;
  }
  int writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }

  Result<std::string> adminComment(uint32_t job_id) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return Error(ErrorCode::kUnavailable, "slurmdbd unreachable (fake)");
    auto it = comments_.find(job_id);
    if (it == comments_.end()) return Error(ErrorCode::kNotFound, "job " + std::to_string(job_id) + " unknown (fake)");
    return it->second;
  }
  Status setAdminComment(uint32_t job_id, const std::string& comment) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return Error(ErrorCode::kUnavailable, "slurmdbd unreachable (fake)");
    auto it = comments_.find(job_id);
    if (it == comments_.end()) return Error(ErrorCode::kNotFound, "job " + std::to_string(job_id) + " unknown (fake)");
    it->second = comment;
    ++writes_;
    return okStatus();
  }

 private:
  mutable std::mutex mu_;
  std::map<uint32_t, std::string> comments_;
  bool reachable_ = true;
  int writes_ = 0;
};

}  // namespace accel::aggregator
