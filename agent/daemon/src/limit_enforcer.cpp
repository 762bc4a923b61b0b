#include "accel/agentd/limit_enforcer.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "accel/common/log.h"

namespace accel::agentd {

using agent::LimitAction;

LimitEnforcer::LimitEnforcer(agent::JobManager& manager, int64_t grace_ns, EnforcerActions actions)
    : manager_(manager), grace_ns_(grace_ns), actions_(std::move(actions)) {}

LimitEnforcer::~LimitEnforcer() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof one);
    thread_.join();
  }
  for (int fd : {timer_fd_, stop_fd_})
    if (fd >= 0) close(fd);
}

Status LimitEnforcer::start() {
  timer_fd_ = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (timer_fd_ < 0 || stop_fd_ < 0) return sysError("limit timer", errno);
  rearm();  // an overdue action fires at once
  thread_ = std::thread([this] { run(); });
  return okStatus();
}

void LimitEnforcer::rearm() {
  std::lock_guard<std::mutex> g(arm_mu_);
  if (timer_fd_ < 0) return;
  const int64_t now = actions_.now();
  int64_t next = 0;
  for (const auto& rec : manager_.jobs()) {
    if (rec.phase != agent::JobPhase::kReady) continue;
    int64_t t = agent::limitTimes(rec.budget, agent::limitPolicy(rec.spec, grace_ns_), now).earliest();
    if (t != 0 && (next == 0 || t < next)) next = t;
  }
  // An absolute time in the past fires at once; zero would disarm.
  itimerspec its{};
  its.it_value.tv_sec = next / 1'000'000'000;
  its.it_value.tv_nsec = next % 1'000'000'000;
  if (next != 0 && its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
  timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &its, nullptr);
}

void LimitEnforcer::run() {
  pollfd fds[2] = {{timer_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      log::error("limit: poll failed; appliance limits are no longer enforced");
      return;
    }
    if (fds[1].revents != 0) return;
    uint64_t ticks = 0;
    (void)!read(timer_fd_, &ticks, sizeof ticks);
    actOnDue();
    rearm();
  }
}

void LimitEnforcer::actOnDue() {
  for (const auto& snapshot : manager_.jobs()) {
    if (snapshot.phase != agent::JobPhase::kReady) continue;
    auto rec = snapshot;
    // Several actions may be due at once (after a restart): take them in order.
    for (int i = 0; i < 3; ++i) {
      const int64_t now = actions_.now();
      auto action = agent::dueAction(rec.budget, agent::limitPolicy(rec.spec, grace_ns_), now);
      if (action == LimitAction::kNone) break;
      act(rec, action, now);
      auto fresh = manager_.job(rec.spec.job_id);
      if (!fresh || fresh->phase != agent::JobPhase::kReady) break;
      rec = *fresh;
    }
  }
}

void LimitEnforcer::act(const agent::JobRecord& rec, LimitAction action, int64_t now) {
  const uint32_t id = rec.spec.job_id;
  const uint64_t limit_s = static_cast<uint64_t>(rec.spec.appliance_time_sec);
  const int64_t used_ns = agent::usedNs(rec.budget, now);
  const std::string who = "limit: job " + std::to_string(id) + ": ";
  if (action == LimitAction::kWarn) {
    // The waiters of surrogate steps stay: ending one would cancel its appliance job early.
    std::vector<agent::TaskRef> own;
    for (const auto& t : rec.tasks)
      if (std::find(rec.surrogate_steps.begin(), rec.surrogate_steps.end(), t.step_id) == rec.surrogate_steps.end())
        own.push_back(t);
    int n = actions_.signal_tasks(own, rec.spec.appliance_signal);
    int64_t left = static_cast<int64_t>(limit_s) * 1'000'000'000 - used_ns;
    actions_.emit(event::TimeLimitWarning{
        .job_id = id, .limit_s = limit_s, .remaining_s = static_cast<uint64_t>(std::max<int64_t>(0, left) / 1'000'000'000)});
    log::info(who + "signal " + std::to_string(rec.spec.appliance_signal) + " sent to " + std::to_string(n) +
              " task(s) ahead of the appliance limit");
  } else if (action == LimitAction::kEnforce) {
    int n = actions_.signal_tasks(rec.tasks, SIGTERM);
    if (actions_.cancel_appliance) actions_.cancel_appliance(id);
    actions_.emit(event::TimeLimitEnforced{
        .job_id = id, .limit_s = limit_s, .used_s = static_cast<uint64_t>(used_ns / 1'000'000'000)});
    log::warning(who + "appliance limit of " + std::to_string(limit_s) + " s reached: SIGTERM sent to " +
                 std::to_string(n) + " task(s), appliance jobs cancelled");
  } else if (action == LimitAction::kKill) {
    int n = actions_.signal_tasks(rec.tasks, SIGKILL);
    if (n > 0) log::warning(who + "SIGKILL sent to " + std::to_string(n) + " task(s) left after the grace period");
  }
  // Persisted before the next action is considered: never taken twice.
  auto s = manager_.limitActionTaken(id, action, now);
  if (!s.ok()) log::error(who + "limit action not recorded: " + s.error().message());
}

}  // namespace accel::agentd
