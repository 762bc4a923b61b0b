#include "accel/agentd/node_drain.h"

#include "accel/common/log.h"

namespace accel::agentd {

NodeDrainer::NodeDrainer(DrainFn drain, DoneFn done)
    : drain_(std::move(drain)), done_(std::move(done)), worker_([this] { run(); }) {}

NodeDrainer::~NodeDrainer() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
    for (const auto& p : queue_)
      log::warning("drain: job " + std::to_string(p.job_id) + ": node " + p.node +
                   " not drained: accel-agentd is stopping");
    queue_.clear();
  }
  cv_.notify_all();
  worker_.join();
}

bool NodeDrainer::drainOnce(uint32_t job_id, const std::string& node, const std::string& reason) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (stop_ || !asked_.insert(job_id).second) return false;
    asked_order_.push_back(job_id);
    while (asked_order_.size() > kRemembered) {
      asked_.erase(asked_order_.front());
      asked_order_.pop_front();
    }
    queue_.push_back(Pending{job_id, node, reason});
  }
  cv_.notify_all();
  return true;
}

void NodeDrainer::drain(uint32_t job_id, const std::string& node, const std::string& reason) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (stop_) return;
    queue_.push_back(Pending{job_id, node, reason});
  }
  cv_.notify_all();
}

void NodeDrainer::waitIdle() {
  std::unique_lock<std::mutex> g(mu_);
  cv_.wait(g, [this] { return queue_.empty() && !busy_; });
}

void NodeDrainer::run() {
  std::unique_lock<std::mutex> g(mu_);
  for (;;) {
    cv_.wait(g, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    g.unlock();
    Status s = drain_ ? drain_(p.node, p.reason)
                      : Status(Error(ErrorCode::kUnsupported, "no way to drain"));
    const std::string who = "drain: job " + std::to_string(p.job_id) + ": node " + p.node;
    if (s.ok())
      log::warning(who + " drained: " + p.reason);
    else
      log::error(who + " not drained (" + p.reason + "): " + s.error().message());
    if (done_) done_(p.job_id, p.node, s);
    g.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace accel::agentd
