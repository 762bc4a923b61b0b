#pragma once
// An appliance that holds state instead of talking to one: tests set the
// jobs it lists, make it unreachable, and read what was polled and
// cancelled. Header only; link accel_appliance_api.
//
// The fields are the fake's state, public so that a test sets them up
// directly. A test whose code under test polls from another thread changes
// `list`, `down` and `down_error` under `mu`; `polls` may be read any time.
#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "accel/appliance/appliance.h"

namespace accel::appliance {

class FakeAppliance : public ApplianceClient {
 public:
  explicit FakeAppliance(std::string description = "fake appliance")
      : description_(std::move(description)) {}

  // Every call counts as a poll, also one that fails.
  Result<std::vector<ApplianceJob>> jobs() override {
    std::lock_guard<std::mutex> g(mu);
    ++polls;
    if (down) return down_error;
    return list;
  }
  // Never fails, as cancelling an ended or unknown job does not.
  Status cancel(const std::string& id) override {
    std::lock_guard<std::mutex> g(mu);
    cancelled.push_back(id);
    return okStatus();
  }
  std::string describe() const override { return description_; }

  std::mutex mu;
  std::vector<ApplianceJob> list;      // what jobs() returns while up
  std::vector<std::string> cancelled;  // ids, in the order of the calls
  bool down = false;                   // true: jobs() returns down_error
  Error down_error{ErrorCode::kUnavailable, "csctl get jobs: connection refused"};
  std::atomic<int> polls{0};

 private:
  std::string description_;
};

}  // namespace accel::appliance
