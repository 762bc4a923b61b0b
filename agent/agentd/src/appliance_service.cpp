#include "accel/agentd/appliance_service.h"

#include <algorithm>
#include <system_error>

#include "accel/common/log.h"

namespace accel::agentd {

ApplianceService::ApplianceService(agent::JobManager& manager,
                                   std::shared_ptr<appliance::ApplianceClient> client,
                                   AgentMetrics& metrics, Emit emit, Options options)
    : manager_(manager),
      client_(std::move(client)),
      metrics_(metrics),
      emit_(std::move(emit)),
      options_(std::move(options)),
      processes_(std::make_unique<JobProcesses>(
          JobProcesses::Options{.proc_root = options_.proc_root,
                                .mounts = std::nullopt,
                                .ask_slurm = options_.ask_slurm,
                                .tracking_changed = options_.tracking_changed})) {}

ApplianceService::~ApplianceService() { stop(); }

Status ApplianceService::start() {
  if (client_ && options_.surrogate_steps) {
    SurrogateOptions o;
    o.accelctl = options_.accelctl;
    o.config_path = options_.config_path;
    if (const char* conf = std::getenv("SLURM_CONF")) o.slurm_conf = conf;
    surrogates_ = std::make_unique<SurrogateSteps>(
        std::move(o),
        [this](const SurrogateSpec& spec, int status) { surrogateEnded(spec, status); });
  }
  if (client_) {
    // Told once per entry while it stays listed.
    auto ignored = [](const appliance::ApplianceJob& j) {
      const std::string who = j.uid >= 0 ? "user " + (j.user.empty() ? "" : "'" + j.user + "' ") +
                                               "(uid " + std::to_string(j.uid) + ")"
                              : !j.user.empty() ? "user '" + j.user + "'"
                                                : "a user the appliance does not name";
      log::warning("appliance: job " + std::to_string(j.slurm_job_id) + ": " +
                   (j.id.empty() ? "an appliance job" : j.id) + " of " + who +
                   " carries this job's label but is not its user's: ignored");
    };
    watcher_ = std::make_unique<agent::ApplianceWatcher>(
        client_, options_.poll_interval, [this] { return liveJobs(); },
        [this](const appliance::ApplianceJob& j) { changed(j); }, *options_.clock, ignored);
  }
  // Every object is made before any thread starts, and the enforcer starts
  // before the watcher, whose callbacks reach it (through the job manager's
  // budget listener).
  EnforcerActions actions;
  actions.signal_job = [this](const agent::JobRecord& rec, agent::LimitAction action, int sig) {
    return processes_->signal(rec, action, sig);
  };
  actions.follow_up = [this](const agent::JobRecord& rec, agent::LimitAction action, int sig) {
    killFollowUp(rec, action, sig);
  };
  actions.observe = [this](const std::vector<agent::JobRecord>& ready) {
    std::vector<uint32_t> ids;
    for (const auto& r : ready) {
      processes_->observe(r);
      ids.push_back(r.spec.job_id);
    }
    processes_->retain(ids);
  };
  actions.emit = [this](const event::Event& e) {
    if (std::holds_alternative<event::TimeLimitEnforced>(e)) metrics_.limit_enforcements.add();
    emit_(e);
  };
  actions.clock = options_.clock;
  if (client_) actions.cancel_appliance = [this](uint32_t id) { queueCancel(id); };
  limits_ = std::make_unique<LimitEnforcer>(manager_, options_.kill_grace_ns, std::move(actions));
  adoptSurrogates();
  ACCEL_TRY(limits_->start().context("appliance limits"));
  if (watcher_) watcher_->start();
  return okStatus();
}

void ApplianceService::stop() {
  // Threads first, objects last: each of these may still call another's
  // rearm() or poke() until its own thread has ended.
  if (watcher_) watcher_->stop();
  if (limits_) limits_->stop();
  surrogates_.reset();
  std::vector<CancelThread> cancels;
  {
    std::lock_guard<std::mutex> g(cancel_mu_);
    cancel_stop_ = true;
    cancels.swap(cancels_);
  }
  for (auto& c : cancels) c.thread.join();
  limits_.reset();
  watcher_.reset();
}

std::string ApplianceService::processTracking() const { return processes_->describe(); }

// After SIGKILL the job's processes go within milliseconds; one still there
// after unkillable_after (stuck in the kernel) is the node's fault, never the
// user's: the node is drained with the job and the processes named.
void ApplianceService::killFollowUp(const agent::JobRecord& rec, agent::LimitAction action,
                                    int sig) {
  auto left = processes_->followUp(rec, action, sig, options_.unkillable_after);
  if (left.empty()) return;
  std::string names;
  for (size_t i = 0; i < left.size() && i < 8; ++i)
    names += (i == 0 ? "" : ", ") + std::to_string(left[i].pid) + " (" + left[i].comm + ", " +
             std::string(1, left[i].state) + ")";
  if (left.size() > 8) names += " and " + std::to_string(left.size() - 8) + " more";
  const std::string reason = "accel: job " + std::to_string(rec.spec.job_id) + ": " +
                             std::to_string(left.size()) +
                             " process(es) outlived SIGKILL at the appliance limit: " + names;
  log::error("limit: " + reason);
  if (options_.node_fault) options_.node_fault(rec.spec.job_id, rec.spec.node, reason);
}

std::vector<appliance::ApplianceJob> ApplianceService::jobsOf(uint32_t job_id) const {
  return watcher_ ? watcher_->jobsOf(job_id) : std::vector<appliance::ApplianceJob>{};
}

double ApplianceService::secondsOf(uint32_t job_id) const {
  return watcher_ ? watcher_->secondsOf(job_id) : 0.0;
}

void ApplianceService::jobsChanged() {
  if (watcher_) watcher_->poke();
}

void ApplianceService::surrogateStarted(const std::string& appliance_job) {
  std::lock_guard<std::mutex> g(surrogate_mu_);
  surrogate_started_.insert(appliance_job);
}

void ApplianceService::rearmLimits() {
  if (limits_) limits_->rearm();
}

// Past its allowance a job's appliance work streams nothing more; said once.
bool ApplianceService::eventAllowed(uint32_t job_id) {
  auto take = events_.take(job_id);
  if (take == agent::PerJobCap::Take::kFirstRefused)
    log::warning("appliance: job " + std::to_string(job_id) + ": " +
                 std::to_string(agent::kMaxApplianceEventsPerJob) +
                 " events of its appliance jobs and surrogate steps streamed; no more are");
  return take == agent::PerJobCap::Take::kAllowed;
}

// The jobs whose appliance work is followed: those ready here.
std::vector<agent::LiveJob> ApplianceService::liveJobs() {
  std::vector<agent::LiveJob> jobs;
  std::set<uint32_t> ids;
  for (const auto& r : manager_.jobs())
    if (r.phase == agent::JobPhase::kReady) {
      jobs.push_back(agent::LiveJob{.id = r.spec.job_id,
                                    .uid = r.spec.uid,
                                    .user = r.spec.user,
                                    .later_run = r.spec.restart_count > 0});
      ids.insert(r.spec.job_id);
    }
  events_.keepOnly(ids);
  return jobs;
}

void ApplianceService::changed(const appliance::ApplianceJob& j) {
  (void)manager_.applianceJobSeen(j.slurm_job_id, j);  // kNotFound: the job just ended
  maybeSurrogate(j);
  if (!eventAllowed(j.slurm_job_id)) return;
  log::info("appliance: job " + std::to_string(j.slurm_job_id) + ": " + j.id + " " +
            appliance::stateName(j.state) + " (" + std::to_string(j.systems) + " CS-X)" +
            (j.unreadable.empty() ? ""
                                  : "; its entry cannot be read (" + j.unreadable +
                                        "), so the job counts as using the appliance"));
  emit_(event::ApplianceJobChanged{
      .job_id = j.slurm_job_id,
      .appliance_job = j.id,
      .state = static_cast<event::ApplianceState>(static_cast<int>(j.state)),
      .csx_count = j.systems,
      .seconds_used = static_cast<uint64_t>(watcher_->secondsOf(j.slurm_job_id))});
}

// Surrogate steps a previous daemon started: their sruns are no children of this one.
// An srun that is gone ended a step only if every claimed step was made (Slurm may
// have refused one, and then its appliance job is not the step's to cancel).
void ApplianceService::adoptSurrogates() {
  if (!surrogates_) return;
  for (const auto& rec : manager_.jobs()) {
    if (rec.phase != agent::JobPhase::kReady) continue;
    const bool all_made = rec.surrogate_steps.size() >= rec.surrogates.size();
    for (const auto& id : rec.surrogates) {
      surrogateStarted(id);
      surrogates_->adopt(SurrogateSpec{.job_id = rec.spec.job_id,
                                       .uid = rec.spec.uid,
                                       .gid = rec.spec.gid,
                                       .user = rec.spec.user,
                                       .appliance_job = id,
                                       .step_name = id},
                         rec.ready_ns, all_made);
    }
  }
}

// A surrogate step once per appliance job, also across restarts, made by the
// job's leader (wantsSurrogate).
void ApplianceService::maybeSurrogate(const appliance::ApplianceJob& j) {
  if (!surrogates_) return;
  auto rec = manager_.job(j.slurm_job_id);
  if (!rec || !wantsSurrogate(*rec, j)) return;
  auto claimed = manager_.claimSurrogate(j.slurm_job_id, j.id);
  if (!claimed.ok() && claimed.error().code() != ErrorCode::kNotFound)
    log::warning("surrogate: job " + std::to_string(j.slurm_job_id) + ": no step for " + j.id +
                 ": " + claimed.error().message());
  if (!claimed.ok() || !*claimed) return;
  SurrogateSpec spec{.job_id = j.slurm_job_id,
                     .uid = rec->spec.uid,
                     .gid = rec->spec.gid,
                     .user = rec->spec.user,
                     .appliance_job = j.id,
                     .step_name = surrogateStepName(j)};
  log::info("surrogate: job " + std::to_string(j.slurm_job_id) + ": step " + spec.step_name +
            " started");
  surrogates_->launch(spec);
}

// srun ended. If the appliance job still runs, Slurm ended the step (scancel
// of the step or the job, the job's time limit): the appliance job goes too.
void ApplianceService::surrogateEnded(const SurrogateSpec& spec, int status) {
  const std::string who =
      "surrogate: job " + std::to_string(spec.job_id) + ": step " + spec.step_name + ": ";
  {
    std::lock_guard<std::mutex> g(surrogate_mu_);
    // A waiter that never reported means srun did not make the step (Slurm
    // refused it): the appliance job is not the step's to end.
    if (surrogate_started_.erase(spec.appliance_job) == 0) {
      log::error(who + "srun ended (wait status " + std::to_string(status) +
                 ") before the step started");
      return;
    }
  }
  auto jobs = client_->jobs();
  if (!jobs.ok()) {
    log::error(who + "ended; appliance state unknown: " + jobs.error().message());
    return;
  }
  for (const auto& j : *jobs) {
    if (j.id != spec.appliance_job || appliance::isFinal(j.state)) continue;
    auto s = client_->cancel(j.id);
    log::warning(
        who + "ended by Slurm (wait status " + std::to_string(status) + ") while " + j.id +
        " was " + appliance::stateName(j.state) +
        (s.ok() ? "; appliance job cancelled" : "; cancel failed: " + s.error().message()));
    if (watcher_) watcher_->poke();
  }
}

// Called on the enforcer's reporting thread; returns at once.
// Called on the enforcer's reporting thread; returns at once. The job's
// user is taken now: its record may be gone by the time the cancel runs.
void ApplianceService::queueCancel(uint32_t job_id) {
  auto rec = manager_.job(job_id);
  if (!rec) return;
  Cancel c{job_id, rec->spec.uid, rec->spec.user};
  std::lock_guard<std::mutex> g(cancel_mu_);
  if (cancel_stop_) return;
  reapCancelsLocked();
  auto done = std::make_shared<std::atomic<bool>>(false);
  try {
    std::thread t([this, c = std::move(c), done] {
      cancelJobsOf(c);
      watcher_->poke();
      done->store(true);
    });
    cancels_.push_back(CancelThread{std::move(t), std::move(done)});
  } catch (const std::system_error& e) {
    log::error("limit: job " + std::to_string(job_id) +
               ": appliance jobs not cancelled: no thread: " + e.what());
  }
}

void ApplianceService::reapCancelsLocked() {
  for (auto it = cancels_.begin(); it != cancels_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = cancels_.erase(it);
    } else {
      ++it;
    }
  }
}

// The list is read afresh, so an appliance job submitted since the last
// poll is cancelled too.
void ApplianceService::cancelJobsOf(const Cancel& c) {
  const uint32_t job_id = c.job_id;
  auto jobs = client_->jobs();
  if (!jobs.ok()) {
    log::error("limit: job " + std::to_string(job_id) +
               ": appliance jobs not cancelled: " + jobs.error().message());
    return;
  }
  // Only the job's own: another user's appliance job is not this job's to
  // end, whatever its label. One that cannot be read is cancelled if it
  // can be named (cancelling an ended job changes nothing).
  for (const auto& j : *jobs) {
    if (j.slurm_job_id != job_id || !appliance::ownedBy(j, c.uid, c.user) ||
        !appliance::isValidJobId(j.id) || (j.unreadable.empty() && appliance::isFinal(j.state)))
      continue;
    auto s = client_->cancel(j.id);
    if (!s.ok())
      log::error("limit: job " + std::to_string(job_id) + ": cancel " + j.id + ": " +
                 s.error().message());
  }
}

}  // namespace accel::agentd
