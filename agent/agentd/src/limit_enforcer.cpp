#include "accel/agentd/limit_enforcer.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "accel/agent/job_nodes.h"
#include "accel/common/log.h"

namespace accel::agentd {

using agent::LimitAction;

namespace {

// The signal of each action: the job's own warning signal, SIGTERM, SIGKILL.
int signalFor(const agent::JobRecord& rec, LimitAction action) {
  return action == LimitAction::kKill   ? SIGKILL
         : action == LimitAction::kWarn ? rec.spec.appliance_signal
                                        : SIGTERM;
}

// What a signal reached, for the log: a count, or the job through slurmctld.
std::string reachedText(int reached) {
  return reached < 0 ? "the job's steps through slurmctld (no cgroup tracking here)"
                     : std::to_string(reached) + " process(es)";
}

}  // namespace

LimitEnforcer::LimitEnforcer(agent::JobManager& manager, int64_t grace_ns, EnforcerActions actions)
    : manager_(manager), grace_ns_(grace_ns), actions_(std::move(actions)) {}

LimitEnforcer::~LimitEnforcer() {
  stop();
  for (int fd : {timer_fd_, stop_fd_})
    if (fd >= 0) close(fd);
}

void LimitEnforcer::stop() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof one);
    thread_.join();
  }
  {
    std::lock_guard<std::mutex> g(report_mu_);
    stopping_ = true;
  }
  report_cv_.notify_all();
  if (reporter_.joinable()) reporter_.join();  // what was taken is still recorded
}

Status LimitEnforcer::start() {
  timer_fd_ = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (timer_fd_ < 0 || stop_fd_ < 0) return sysError("limit timer", errno);
  rearm();  // an overdue action fires at once
  reporter_ = std::thread([this] { reportLoop(); });
  thread_ = std::thread([this] { run(); });
  // Named, so that operators (`ps -L`, `top -H`) and the tests find it.
  pthread_setname_np(thread_.native_handle(), "accel-limit");
  // A busy node (builds, data loaders) can hold an ordinary thread off the
  // CPU for tens of milliseconds. The lowest real-time priority puts the
  // enforcer ahead of all of that; it sleeps in poll() almost always, so it
  // takes nothing from anyone. Without the privilege it runs as it is.
  sched_param prio{};
  prio.sched_priority = 1;
  if (pthread_setschedparam(thread_.native_handle(), SCHED_FIFO, &prio) != 0)
    log::info(
        "limit: no real-time priority for the limit thread; deadlines may slip on a busy node");
  return okStatus();
}

void LimitEnforcer::rearm() {
  // The records are read before arm_mu_ is taken: a request thread may hold
  // the manager's lock for a while (a slow disk), and the timer thread must
  // never wait behind that. A newer read always wins over an older one.
  const uint64_t gen = ++read_gen_;
  auto jobs = manager_.jobs();
  std::erase_if(jobs, [](const agent::JobRecord& r) { return r.phase != agent::JobPhase::kReady; });
  if (actions_.observe) actions_.observe(jobs);
  std::lock_guard<std::mutex> g(arm_mu_);
  if (timer_fd_ < 0 || gen < installed_gen_) return;
  installed_gen_ = gen;
  pending_.clear();
  std::map<uint32_t, Mark> live_marks;  // marks of jobs gone are dropped
  for (auto& rec : jobs) {
    if (rec.phase != agent::JobPhase::kReady) continue;
    overlayLocked(rec);
    if (auto it = marks_.find(rec.spec.job_id); it != marks_.end()) live_marks.insert(*it);
    pending_.push_back(std::move(rec));
  }
  marks_ = std::move(live_marks);
  armLocked();
}

// Sets the timer from pending_ alone: the timer thread calls this after
// acting, without reading the records (the reporter may be writing them).
void LimitEnforcer::armLocked() {
  const int64_t now = actions_.clock->wallNs();
  int64_t next = 0;
  for (auto& rec : pending_) {
    overlayLocked(rec);
    int64_t t =
        agent::limitTimes(rec.budget, agent::limitPolicy(rec.spec, grace_ns_), now).earliest();
    if (t != 0 && (next == 0 || t < next)) next = t;
  }
  // Armed relative to now on CLOCK_BOOTTIME: a step of the wall clock after
  // this moves nothing (the clock is the job clock, which does not step either).
  // A time already past fires at once; zero would disarm.
  itimerspec its{};
  if (next != 0) {
    const int64_t in = std::max<int64_t>(1, next - now);
    its.it_value.tv_sec = in / 1'000'000'000;
    its.it_value.tv_nsec = in % 1'000'000'000;
  }
  timerfd_settime(timer_fd_, 0, &its, nullptr);
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
    std::lock_guard<std::mutex> g(arm_mu_);
    armLocked();
  }
}

// Actions taken but maybe not yet in the job record: a re-arm from the
// record alone would take them again.
void LimitEnforcer::overlayLocked(agent::JobRecord& rec) const {
  auto it = marks_.find(rec.spec.job_id);
  // A requeued job keeps its id but has a new prolog: old marks are not its.
  if (it == marks_.end() || it->second.ready_ns != rec.ready_ns) return;
  auto& b = rec.budget;
  if (b.warned_ns == 0) b.warned_ns = it->second.taken.warned_ns;
  if (b.enforced_ns == 0) b.enforced_ns = it->second.taken.enforced_ns;
  if (b.killed_ns == 0) b.killed_ns = it->second.taken.killed_ns;
}

// Only signals here, from the snapshot taken at the last re-arm: no lock a
// request thread holds, no disk, no appliance client. Events, logs and the
// job records are the reporter thread's.
void LimitEnforcer::actOnDue() {
  std::vector<agent::JobRecord> pending;
  {
    std::lock_guard<std::mutex> g(arm_mu_);
    pending = pending_;
  }
  for (const auto& rec : pending) {
    const int64_t now = actions_.clock->wallNs();
    const auto policy = agent::limitPolicy(rec.spec, grace_ns_);
    auto action = agent::dueAction(rec.budget, policy, now);
    if (action == LimitAction::kNone) continue;
    auto times = agent::limitTimes(rec.budget, policy, now);
    const int sig = signalFor(rec, action);
    int reached = actions_.signal_job(rec, action, sig);
    const int64_t due = action == LimitAction::kWarn      ? times.warn_ns
                        : action == LimitAction::kEnforce ? times.enforce_ns
                                                          : times.kill_ns;
    Taken t{rec, action, now, sig, reached, actions_.clock->wallNs() - due};
    {
      std::lock_guard<std::mutex> g(arm_mu_);
      auto& mark = marks_[rec.spec.job_id];
      if (mark.ready_ns != rec.ready_ns) mark = Mark{rec.ready_ns, {}};
      auto& m = mark.taken;
      (action == LimitAction::kWarn      ? m.warned_ns
       : action == LimitAction::kEnforce ? m.enforced_ns
                                         : m.killed_ns) = now;
    }
    {
      std::lock_guard<std::mutex> g(report_mu_);
      reports_.push_back(std::move(t));
    }
    report_cv_.notify_one();
  }
}

void LimitEnforcer::reportLoop() {
  std::unique_lock<std::mutex> lk(report_mu_);
  for (;;) {
    report_cv_.wait(lk, [this] { return stopping_ || !reports_.empty(); });
    if (reports_.empty()) return;  // stopping, nothing left
    Taken t = std::move(reports_.front());
    reports_.pop_front();
    lk.unlock();
    report(t);
    lk.lock();
  }
}

// The registered tasks an action reaches, where the node has no cgroup
// tracking (job_processes.h reaches every process where it has). The
// warning goes where --appliance-signal asked, as sbatch --signal does:
// the tasks of the job's steps, or with B: the batch shell alone. The
// waiters of surrogate steps are spared the warning (ending one would cancel
// its appliance job early) and SIGTERM (the cancel ends them, and they exit 1
// so that their steps read FAILED; a signalled step reads CANCELLED).
// SIGTERM reaches every other task, the batch shell too, as at Slurm's own
// time limit; SIGKILL after the grace reaches whatever is left. The waiters
// report their steps as the job's user, so at most kMaxSurrogateStepsPerJob
// are spared (agent::sparedSteps).
std::vector<agent::TaskRef> tasksToSignal(const agent::JobRecord& rec, LimitAction action) {
  if (action == LimitAction::kKill) return rec.tasks;
  const auto spared = agent::sparedSteps(rec);
  std::vector<agent::TaskRef> own;
  for (const auto& t : rec.tasks) {
    if (std::find(spared.begin(), spared.end(), t.step_id) != spared.end()) continue;
    if (action == LimitAction::kWarn &&
        (t.step_id == agent::kBatchStepId) != rec.spec.appliance_signal_batch)
      continue;
    own.push_back(t);
  }
  return own;
}

void LimitEnforcer::report(const Taken& t) {
  const auto& rec = t.rec;
  const uint32_t id = rec.spec.job_id;
  const uint64_t limit_s = static_cast<uint64_t>(rec.spec.appliance_time_sec);
  const int64_t used_ns = agent::usedNs(rec.budget, t.at_ns);
  const std::string who = "limit: job " + std::to_string(id) + ": ";
  // Recorded first: an action is never taken twice, also across a restart.
  auto s = manager_.limitActionTaken(id, t.action, t.at_ns);
  // A job whose every process went at SIGTERM may be over, its epilog done,
  // before this is written: nothing is left to record it in.
  if (!s.ok() && s.error().code() == ErrorCode::kNotFound)
    log::info(who + "over before its limit action was recorded");
  else if (!s.ok())
    log::error(who + "limit action not recorded: " + s.error().message());
  if (t.action == LimitAction::kWarn) {
    int64_t left = static_cast<int64_t>(limit_s) * 1'000'000'000 - used_ns - rec.budget.carried_ns;
    actions_.emit(event::TimeLimitWarning{
        .job_id = id,
        .limit_s = limit_s,
        // To the nearest second: the thread wakes a moment after the warning
        // is due, and a lead of 3 s still reads 3, not 2.
        .remaining_s =
            static_cast<uint64_t>((std::max<int64_t>(0, left) + 500'000'000) / 1'000'000'000)});
    log::info(who + "signal " + std::to_string(rec.spec.appliance_signal) + " sent to " +
              reachedText(t.reached) + " ahead of the appliance limit");
  } else if (t.action == LimitAction::kEnforce) {
    // Every node of the job reads the same appliance, so each reaches the
    // limit at once and stops its own tasks; the cancel is issued once, by
    // the job's leader.
    const bool leads = agent::leadsJob(rec.spec);
    if (actions_.cancel_appliance && leads) actions_.cancel_appliance(id);
    actions_.emit(
        event::TimeLimitEnforced{.job_id = id,
                                 .limit_s = limit_s,
                                 .used_s = static_cast<uint64_t>(used_ns / 1'000'000'000)});
    log::warning(who + "appliance limit of " + std::to_string(limit_s) +
                 " s reached: SIGTERM sent to " + reachedText(t.reached) + " " +
                 std::to_string(t.late_ns / 1000) + " us after the deadline" +
                 (!actions_.cancel_appliance ? ""
                  : leads                    ? ", appliance jobs cancelled"
                          : "; the job's first node " + agent::jobLeader(rec.spec) +
                                " cancels its appliance jobs"));
  } else if (t.reached != 0) {
    log::warning(who + "SIGKILL sent to " + reachedText(t.reached) +
                 " left after the grace period");
  }
  if (actions_.follow_up) actions_.follow_up(rec, t.action, t.sig);
}

}  // namespace accel::agentd
