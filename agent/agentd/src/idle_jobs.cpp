#include "accel/agentd/idle_jobs.h"

#include "accel/common/log.h"

namespace accel::agentd {

using Action = AccelConfig::IdleAction;

IdlePolicy idlePolicyOf(const AccelConfig& config) {
  IdlePolicy p;
  p.action = config.idle_action;
  if (!config.idle_after.isUnlimited()) p.after = config.idle_after.toChrono();
  return p;
}

namespace {

// "31 min", "45 s", "2 h 5 min": how people read a duration in a job's output.
std::string spoken(uint64_t s) {
  if (s < 120) return std::to_string(s) + " s";
  const uint64_t min = s / 60;
  if (min < 120) return std::to_string(min) + " min";
  return std::to_string(min / 60) + " h " + std::to_string(min % 60) + " min";
}

std::string gpuList(const std::vector<uint32_t>& devices) {
  std::string out = devices.size() == 1 ? "GPU " : "GPUs ";
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i > 0) out += i + 1 == devices.size() ? " and " : ", ";
    out += std::to_string(devices[i]);
  }
  return devices.empty() ? "GPUs" : out;
}

}  // namespace

std::string idleLine(uint32_t job_id, const std::string& node, uint64_t idle_s,
                     const std::vector<uint32_t>& devices, Action action) {
  std::string line = "accel: job " + std::to_string(job_id) + ": " + gpuList(devices) + " on " +
                     node + " read 0% utilization for " + spoken(idle_s) + " (idle accelerators); ";
  if (action == Action::kCancel)
    return line + "this site cancels jobs whose accelerators stay idle: the job is cancelled now";
  return line + "if the job does not need them, end it or ask for fewer, so others can use them";
}

IdleJobs::IdleJobs(const agent::UtilizationSource& source, IdlePolicy policy, IdleActions actions)
    : source_(source), actions_(std::move(actions)), policy_(policy) {}

IdleJobs::~IdleJobs() { stop(); }

void IdleJobs::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { run(); });
}

void IdleJobs::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void IdleJobs::setPolicy(IdlePolicy policy) {
  {
    std::lock_guard lock(mu_);
    policy_ = policy;
  }
  wake_.notify_all();
}

void IdleJobs::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    // Checks follow the samples; off (IdleAfter=0), the thread only waits for
    // a reload or the stop.
    const auto interval = std::max(source_.sampleInterval(), std::chrono::milliseconds(100));
    if (policy_.after.count() > 0)
      wake_.wait_for(lock, interval);
    else
      wake_.wait(lock);
    if (stopping_) break;
    lock.unlock();
    checkOnce();
    lock.lock();
  }
}

std::vector<agent::IdleJob> IdleJobs::checkOnce() {
  IdlePolicy policy;
  {
    std::lock_guard lock(mu_);
    policy = policy_;
  }
  auto idle = watch_.check(source_.idleness(), source_.sampleInterval(), policy.after);
  for (const auto& job : idle) act(job, policy);
  return idle;
}

void IdleJobs::act(const agent::IdleJob& job, const IdlePolicy& policy) {
  const std::string id = std::to_string(job.job_id);
  log::warning("idle: job " + id + ": every GPU it holds here read 0% for " +
               std::to_string(job.idle_s) + " s (IdleAfter " +
               std::to_string(policy.after.count()) + " s, IdleAction " +
               (policy.action == Action::kCancel   ? "cancel"
                : policy.action == Action::kNotify ? "notify"
                                                   : "none") +
               ")");
  event::JobIdle e{.job_id = job.job_id, .idle_s = job.idle_s, .devices = job.devices};
  e.action = policy.action == Action::kCancel   ? event::IdleAction::kCancel
             : policy.action == Action::kNotify ? event::IdleAction::kNotify
                                                : event::IdleAction::kNone;
  if (actions_.tell_job) {
    const std::string line =
        idleLine(job.job_id, actions_.node, job.idle_s, job.devices, policy.action);
    auto told = actions_.tell_job(job.job_id, line, policy.action == Action::kNotify);
    if (!told.ok())
      log::warning("idle: job " + id + ": its output not told: " + told.error().message());
    else if (!*told)
      log::info("idle: job " + id + ": no output file of its own (interactive; IdleAction=notify " +
                "would send it to its srun): " + line);
    e.told_job = told.ok() && *told;
  }
  if (policy.action == Action::kCancel) e.action = cancelWithRetries(job.job_id);
  if (actions_.emit) actions_.emit(event::Event(std::move(e)));
}

event::IdleAction IdleJobs::cancelWithRetries(uint32_t job_id) {
  const std::string id = std::to_string(job_id);
  if (!actions_.cancel) return event::IdleAction::kCancelFailed;
  for (int attempt = 1; attempt <= kCancelTries; ++attempt) {
    Status s = actions_.cancel(job_id);
    if (s.ok()) {
      log::warning("idle: job " + id + ": cancelled (IdleAction=cancel)");
      return event::IdleAction::kCancel;
    }
    log::error("idle: job " + id + ": cancel " + std::to_string(attempt) + " of " +
               std::to_string(kCancelTries) + " failed: " + s.error().message());
    if (attempt == kCancelTries) break;
    std::unique_lock lock(mu_);
    if (wake_.wait_for(lock, actions_.retry_wait, [this] { return stopping_; })) break;
  }
  log::error("idle: job " + id + ": not cancelled; it runs on (no node fault)");
  return event::IdleAction::kCancelFailed;
}

}  // namespace accel::agentd
