#include "accel/agentd/node_health.h"

#include <chrono>

#include "accel/common/clock.h"

namespace accel::agentd {

NodeHealth::NodeHealth(const Clock& clock) : clock_(clock) {}

void NodeHealth::configLoaded() {
  std::lock_guard<std::mutex> g(mu_);
  config_loaded_ns_ = clock_.wallNs();
  config_error_.clear();
}

void NodeHealth::configRefused(const std::string& why) {
  {
    std::lock_guard<std::mutex> g(mu_);
    config_error_ = why;
  }
  nodeFault("reload: " + why);
}

void NodeHealth::addController(const std::string& name, const std::string& client) {
  std::lock_guard<std::mutex> g(mu_);
  auto& c = controllers_[name];
  c.name = name;
  c.client = client;
}

void NodeHealth::setCallTimer(CallTimer timer) {
  std::lock_guard<std::mutex> g(mu_);
  timer_ = std::move(timer);
}

void NodeHealth::controllerCalled(const std::string& name, const std::string& call,
                                  const Status& outcome, double seconds) {
  const int64_t now = clock_.wallNs();
  CallTimer timer;
  {
    std::lock_guard<std::mutex> g(mu_);
    record(name, call, outcome, now);
    timer = timer_;
  }
  if (timer && seconds >= 0) timer(name, outcome.ok(), seconds);
}

void NodeHealth::record(const std::string& name, const std::string& call, const Status& outcome,
                        int64_t now) {
  auto& c = controllers_[name];
  c.name = name;
  c.call = call;
  c.at_ns = now;
  c.ok = outcome.ok();
  c.error = outcome.ok() ? "" : outcome.error().message();
  ++c.calls;
  if (outcome.ok())
    c.last_ok_ns = now;
  else
    ++c.failures;
}

void NodeHealth::nodeFault(const std::string& message) {
  const int64_t now = clock_.wallNs();
  std::lock_guard<std::mutex> g(mu_);
  errors_.push_back(TimedError{now, message});
  while (errors_.size() > kMaxErrors) errors_.pop_front();
}

void NodeHealth::configFault(const std::string& message) {
  nodeFault("configuration fault: " + message);
}

void NodeHealth::processTracking(const std::string& how) {
  std::lock_guard<std::mutex> g(mu_);
  process_tracking_ = how;
}

HealthSnapshot NodeHealth::snapshot() const {
  std::lock_guard<std::mutex> g(mu_);
  HealthSnapshot s{
      config_loaded_ns_, config_error_, {}, {errors_.begin(), errors_.end()}, process_tracking_};
  for (const auto& [name, c] : controllers_) s.controllers.push_back(c);
  return s;
}

namespace {

// How long a call has taken so far.
class CallWatch {
 public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// "Not found" answers are the controller speaking: it was reached.
Status reached(const Status& s) {
  if (!s.ok() && s.error().code() == ErrorCode::kNotFound) return okStatus();
  return s;
}

class WatchedPartitionController : public ipu::PartitionController {
 public:
  WatchedPartitionController(std::shared_ptr<ipu::PartitionController> inner,
                             std::shared_ptr<NodeHealth> health)
      : inner_(std::move(inner)), health_(std::move(health)) {
    health_->addController("vipu", inner_->describe());
  }
  Status create(const ipu::PartitionSpec& spec) override {
    CallWatch w;
    auto s = inner_->create(spec);
    health_->controllerCalled("vipu", "create " + spec.name, s, w.seconds());
    return s;
  }
  Status remove(const std::string& name) override {
    CallWatch w;
    auto s = inner_->remove(name);
    health_->controllerCalled("vipu", "remove " + name, s, w.seconds());
    return s;
  }
  Result<std::vector<ipu::GcdConfig>> ipuofConfigs(const std::string& name) override {
    CallWatch w;
    auto r = inner_->ipuofConfigs(name);
    health_->controllerCalled("vipu", "get " + name,
                              reached(r.ok() ? okStatus() : Status(r.error())), w.seconds());
    return r;
  }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::shared_ptr<ipu::PartitionController> inner_;
  std::shared_ptr<NodeHealth> health_;
};

class WatchedApplianceClient : public appliance::ApplianceClient {
 public:
  WatchedApplianceClient(std::shared_ptr<appliance::ApplianceClient> inner,
                         std::shared_ptr<NodeHealth> health)
      : inner_(std::move(inner)), health_(std::move(health)) {
    health_->addController("appliance", inner_->describe());
  }
  Result<std::vector<appliance::ApplianceJob>> jobs() override {
    CallWatch w;
    auto r = inner_->jobs();
    health_->controllerCalled("appliance", "get jobs", r.ok() ? okStatus() : Status(r.error()),
                              w.seconds());
    return r;
  }
  Status cancel(const std::string& id) override {
    CallWatch w;
    auto s = inner_->cancel(id);
    health_->controllerCalled("appliance", "cancel " + id, s, w.seconds());
    return s;
  }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::shared_ptr<appliance::ApplianceClient> inner_;
  std::shared_ptr<NodeHealth> health_;
};

}  // namespace

std::shared_ptr<ipu::PartitionController> watchCalls(
    std::shared_ptr<ipu::PartitionController> inner, std::shared_ptr<NodeHealth> health) {
  if (!inner) return inner;
  return std::make_shared<WatchedPartitionController>(std::move(inner), std::move(health));
}

std::shared_ptr<appliance::ApplianceClient> watchCalls(
    std::shared_ptr<appliance::ApplianceClient> inner, std::shared_ptr<NodeHealth> health) {
  if (!inner) return inner;
  return std::make_shared<WatchedApplianceClient>(std::move(inner), std::move(health));
}

}  // namespace accel::agentd
