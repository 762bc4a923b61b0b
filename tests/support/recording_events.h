#pragma once
// A JobEvents that keeps what the handlers emit, for tests. Thread-safe:
// handlers may run on several threads.
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "accel/agentd/job_events.h"

namespace accel::support {

class RecordingEvents : public agentd::JobEvents {
 public:
  // Appends to `out` (the test's own vector), else to events().
  explicit RecordingEvents(std::vector<event::Event>* out = nullptr) : out_(out) {}

  void emit(const event::Event& e) override {
    std::lock_guard<std::mutex> g(mu_);
    (out_ != nullptr ? *out_ : own_).push_back(e);
  }
  std::optional<event::OutboxStats> stats() const override {
    std::lock_guard<std::mutex> g(mu_);
    if (stats_from_ == nullptr) return std::nullopt;
    return *stats_from_;
  }
  std::string aggregator() const override {
    std::lock_guard<std::mutex> g(mu_);
    return aggregator_;
  }

  // stats() reads `*stats` at each call (the test may change it); null: no outbox.
  void statsFrom(const event::OutboxStats* stats) {
    std::lock_guard<std::mutex> g(mu_);
    stats_from_ = stats;
  }
  void setAggregator(std::string address) {
    std::lock_guard<std::mutex> g(mu_);
    aggregator_ = std::move(address);
  }
  std::vector<event::Event> events() const {
    std::lock_guard<std::mutex> g(mu_);
    return out_ != nullptr ? *out_ : own_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<event::Event>* out_;
  std::vector<event::Event> own_;
  const event::OutboxStats* stats_from_ = nullptr;
  std::string aggregator_;
};

}  // namespace accel::support
