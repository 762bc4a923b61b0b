#pragma once
// In-memory accounting for tests, the fake of Accounting (accounting.h):
// jobs must be added before they can be written (as slurmdbd knows only
// jobs slurmctld has reported), and the whole service can be made
// unreachable to test retries and back-fill. Header only. A job
// can be added as still running and ended later, with slurmctld's copy of the
// AdminComment arriving with its end as it does from a real slurmctld.
#include <functional>
#include <map>
#include <mutex>
#include <utility>

#include "accel/aggregator/accounting.h"

namespace accel::aggregator {

class FakeAccounting : public Accounting {
 public:
  void addJob(uint32_t job_id, std::string comment = "") {
    std::lock_guard lock(mu_);
    jobs_[job_id] = {.admin_comment = std::move(comment), .running = false};
  }
  // Known to slurmdbd as started, its end not yet recorded.
  void addRunningJob(uint32_t job_id) {
    std::lock_guard lock(mu_);
    jobs_[job_id] = {.admin_comment = "", .running = true};
  }
  // slurmctld's completion record arrives; a non-empty `ctld_comment` is
  // what slurmctld held as the AdminComment, and replaces slurmdbd's.
  void endJob(uint32_t job_id, const std::string& ctld_comment = "") {
    std::lock_guard lock(mu_);
    auto& job = jobs_[job_id];
    job.running = false;
    if (!ctld_comment.empty()) job.admin_comment = ctld_comment;
  }
  // The job was requeued: its latest record is the next run, pending.
  void requeueJob(uint32_t job_id) {
    std::lock_guard lock(mu_);
    jobs_[job_id].running = false;
  }
  // The next run of a requeued job starts.
  void startJob(uint32_t job_id) {
    std::lock_guard lock(mu_);
    jobs_[job_id].running = true;
  }
  void setReachable(bool reachable) {
    std::lock_guard lock(mu_);
    reachable_ = reachable;
  }
  std::string comment(uint32_t job_id) const {
    std::lock_guard lock(mu_);
    auto it = jobs_.find(job_id);
    return it == jobs_.end() ? std::string() : it->second.admin_comment;
  }
  int writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }

  // Runs `hook` once, at the start of the next setAdminComments (without the
  // fake's lock): what happens elsewhere while a batch is being written.
  void onWrite(std::function<void()> hook) {
    std::lock_guard lock(mu_);
    on_write_ = std::move(hook);
  }
  // Calls of either method: the connections slurmdbd would have seen.
  int connections() const {
    std::lock_guard lock(mu_);
    return connections_;
  }

  Result<std::map<uint32_t, AccountedJob>> adminComments(
      const std::vector<uint32_t>& job_ids) override {
    std::lock_guard lock(mu_);
    ++connections_;
    if (!reachable_) return Error(ErrorCode::kUnavailable, "slurmdbd unreachable (fake)");
    std::map<uint32_t, AccountedJob> out;
    for (uint32_t id : job_ids)
      if (auto it = jobs_.find(id); it != jobs_.end()) out[id] = it->second;
    return out;
  }
  std::vector<Status> setAdminComments(const std::vector<CommentUpdate>& updates) override {
    std::function<void()> hook;
    {
      std::lock_guard lock(mu_);
      hook = std::exchange(on_write_, nullptr);
    }
    if (hook) hook();
    std::lock_guard lock(mu_);
    ++connections_;
    std::vector<Status> out;
    for (const auto& u : updates) {
      auto it = jobs_.find(u.job_id);
      if (!reachable_) {
        out.push_back(Error(ErrorCode::kUnavailable, "slurmdbd unreachable (fake)"));
      } else if (it == jobs_.end()) {
        out.push_back(
            Error(ErrorCode::kNotFound, "job " + std::to_string(u.job_id) + " unknown (fake)"));
      } else {
        it->second.admin_comment = u.comment;
        ++writes_;
        out.push_back(okStatus());
      }
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<uint32_t, AccountedJob> jobs_;
  bool reachable_ = true;
  int writes_ = 0;
  int connections_ = 0;
  std::function<void()> on_write_;
};

}  // namespace accel::aggregator
