#pragma once
// In-memory accounting for tests: jobs must be added before they can be
// written (as slurmdbd knows only jobs slurmctld has reported), and the
// whole service can be made unreachable to test retries and back-fill.
#include <functional>
#include <map>
#include <utility>
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

  Result<std::map<uint32_t, std::string>> adminComments(const std::vector<uint32_t>& job_ids) override {
    std::lock_guard lock(mu_);
    ++connections_;
    if (!reachable_) return Error(ErrorCode::kUnavailable, "slurmdbd unreachable (fake)");
    std::map<uint32_t, std::string> out;
    for (uint32_t id : job_ids)
      if (auto it = comments_.find(id); it != comments_.end()) out[id] = it->second;
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
      auto it = comments_.find(u.job_id);
      if (!reachable_) {
        out.push_back(Error(ErrorCode::kUnavailable, "slurmdbd unreachable (fake)"));
      } else if (it == comments_.end()) {
        out.push_back(Error(ErrorCode::kNotFound, "job " + std::to_string(u.job_id) + " unknown (fake)"));
      } else {
        it->second = u.comment;
        ++writes_;
        out.push_back(okStatus());
      }
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<uint32_t, std::string> comments_;
  bool reachable_ = true;
  int writes_ = 0;
  int connections_ = 0;
  std::function<void()> on_write_;
};

}  // namespace accel::aggregator
