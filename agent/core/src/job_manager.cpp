#include "accel/agent/job_manager.h"

#include <algorithm>

#include "accel/common/space_reserve.h"

namespace accel::agent {

JobManager::JobManager(JobStore store, Inventory inventory,
                       std::vector<std::unique_ptr<JobStep>> steps, const Clock& clock)
    : store_(std::move(store)),
      steps_(std::move(steps)),
      clock_(clock),
      inventory_(std::move(inventory)) {}

void JobManager::noteErrorLocked(const std::string& message) {
  errors_.push_back(message);
  while (errors_.size() > kMaxErrors) errors_.pop_front();
}

// The variables that name the job's devices for its tasks.
namespace {

void addOnce(std::string& list, const std::string& item) {
  if (item.empty() || ("," + list + ",").find("," + item + ",") != std::string::npos) return;
  list += (list.empty() ? "" : ",") + item;
}

}  // namespace

// The appliance limit the job runs under, for programs that want to plan
// their checkpoints: seconds, and the warning signal with its lead.
void JobManager::limitEnv(JobRecord& rec) {
  const auto& s = rec.spec;
  if (s.appliance_time_sec > 0)
    rec.env.emplace_back("ACCEL_APPLIANCE_TIME_LIMIT", std::to_string(s.appliance_time_sec));
  if (s.appliance_signal > 0)
    rec.env.emplace_back("ACCEL_APPLIANCE_SIGNAL",
                         std::string(s.appliance_signal_batch ? "B:" : "") +
                             std::to_string(s.appliance_signal) + "@" +
                             std::to_string(s.appliance_signal_lead_sec));
}

void JobManager::deviceEnvLocked(JobRecord& rec) const {
  std::string names, pci, nics, hcas;
  bool gpus = false;
  for (uint32_t d : rec.devices) {
    if (d >= inventory_.devices.size()) continue;
    const auto& dev = inventory_.devices[d];
    gpus = gpus || dev.slot.kind == "gpu";
    for (const auto& h : dev.nearest_rdma) addOnce(hcas, h);
    names += (names.empty() ? "" : ",") + dev.name;
    pci += (pci.empty() ? "" : ",") + dev.pci_bus_id;
    for (const auto& n : dev.nearest_nics) {
      if (("," + nics + ",").find("," + n + ",") == std::string::npos)
        nics += (nics.empty() ? "" : ",") + n;
      break;  // the nearest one per device
    }
  }
  if (rec.devices.empty()) return;
  rec.env.emplace_back("ACCEL_DEVICES", names);
  rec.env.emplace_back("ACCEL_DEVICE_PCI_IDS", pci);
  if (!nics.empty()) rec.env.emplace_back("ACCEL_NICS", nics);
  if (!gpus) return;
  // What NCCL and UCX read to pick their network devices: the RDMA devices
  // nearest the job's GPUs, else the nearest interfaces (UCX's TCP path).
  std::string ucx;
  if (!hcas.empty()) {
    for (size_t at = 0; at <= hcas.size();) {
      size_t comma = std::min(hcas.find(',', at), hcas.size());
      addOnce(ucx, hcas.substr(at, comma - at) + ":1");
      at = comma + 1;
    }
    rec.env.emplace_back("NCCL_IB_HCA", hcas);
    rec.env.emplace_back("ACCEL_NCCL_IB_HCA", hcas);
  } else {
    ucx = nics;
  }
  if (!ucx.empty()) {
    rec.env.emplace_back("UCX_NET_DEVICES", ucx);
    rec.env.emplace_back("ACCEL_UCX_NET_DEVICES", ucx);
  }
}

std::vector<DeviceUse> JobManager::deviceUse() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<DeviceUse> out;
  for (const auto& d : inventory_.devices)
    out.push_back(DeviceUse{d.slot.index, d.name, d.slot.kind, 0, d.pci_bus_id});
  for (const auto& [id, rec] : records_)
    for (uint32_t d : rec.devices)
      if (d < out.size()) out[d].job_id = id;
  return out;
}

Status JobManager::saveLocked(const JobRecord& rec) {
  records_[rec.spec.job_id] = rec;
  return store_.save(rec);
}

// After a prolog failure that left nothing behind: the job is kept as a
// failed record holding nothing, saying why, until its epilog. The job's
// tasks can be told why (a request this node can never meet: the node stays
// up), and the epilog that Slurm runs after a failed prolog finds the job and
// reports its end, also for a node fault (Slurm drains the node and requeues
// the job; a retried prolog starts clean).
void JobManager::keepFailedLocked(JobRecord rec, const Error& why) {
  rec.phase = JobPhase::kFailed;
  rec.devices.clear();
  rec.env.clear();
  rec.job_dir.clear();
  rec.last_error = why.message();
  (void)saveLocked(rec);
}

Result<std::vector<uint32_t>> JobManager::chooseDevices(const JobRequestSpec& spec) {
  // Caller holds mu_. The job's own devices from an earlier attempt are
  // released before this is called, so they count as free.
  if (!spec.refusal.empty()) return Error(ErrorCode::kInvalidArgument, spec.refusal);
  if (auto fault = kindFaultLocked(spec)) return Error(ErrorCode::kInvalidArgument, fault->message);
  AllocatorInput in = inventory_.allocatorInput();
  in.held = held_;
  std::vector<uint32_t> out;
  if (!spec.gpus.empty()) {
    auto ordinals = parseGpuList(spec.gpus);
    ACCEL_TRY(ordinals);
    auto gpus = pickGpus(in, *ordinals);
    ACCEL_TRY(gpus);
    out = *gpus;
  }
  // IPUs are local devices only on hosts with IPU cards; on an IPU-POD they
  // sit behind the fabric and the V-IPU step makes the job's partition.
  bool local_ipus = std::any_of(in.devices.begin(), in.devices.end(),
                                [](const DeviceSlot& s) { return s.kind == "ipu"; });
  if (spec.ipus > 0 && local_ipus) {
    auto ipus = pickByCount(in, "ipu", spec.ipus);
    ACCEL_TRY(ipus);
    out.insert(out.end(), ipus->begin(), ipus->end());
  }
  return out;
}

// An IPU job needs IPUs of the node's own or a V-IPU controller to make its
// partition; without either nothing here can ever serve it.
std::optional<KindFault> JobManager::kindFaultLocked(const JobRequestSpec& spec) const {
  if (spec.ipus == 0 || no_ipu_controller_.empty()) return std::nullopt;
  bool local_ipus = std::any_of(inventory_.devices.begin(), inventory_.devices.end(),
                                [](const InventoryDevice& d) { return d.slot.kind == "ipu"; });
  if (local_ipus) return std::nullopt;
  const std::string node = spec.node.empty() ? "" : " (" + spec.node + ")";
  KindFault f;
  f.message = "this node" + node + " has no V-IPU controller (" + no_ipu_controller_ +
              ") and no IPUs of its own, yet the job asked for " + std::to_string(spec.ipus) +
              " IPUs: a fault of the cluster's configuration, not of the job";
  f.fault = "job " + std::to_string(spec.job_id) +
            " asked for IPUs but this node has no V-IPU controller (" + no_ipu_controller_ +
            "); check the Slurm partition's nodes";
  return f;
}

std::optional<KindFault> JobManager::kindFault(const JobRequestSpec& spec) const {
  std::lock_guard<std::mutex> g(mu_);
  return kindFaultLocked(spec);
}

void JobManager::setNoIpuController(std::string why) {
  std::lock_guard<std::mutex> g(mu_);
  no_ipu_controller_ = std::move(why);
}

Status JobManager::runSetUp(JobRecord& rec, size_t* done) {
  for (*done = 0; *done < steps_.size(); ++*done) {
    auto s = steps_[*done]->setUp(rec);
    if (!s.ok()) return s.error().context(std::string(steps_[*done]->name()));
  }
  return okStatus();
}

// Tears down steps [0, from) in reverse; keeps going past failures so one
// stuck resource does not leave the others behind, and reports the first.
Status JobManager::runTearDown(const JobRecord& rec, size_t from) {
  Status first;
  for (size_t i = from; i-- > 0;) {
    auto s = steps_[i]->tearDown(rec);
    if (!s.ok() && first.ok()) first = s.error().context(std::string(steps_[i]->name()));
  }
  return first;
}

Result<JobRecord> JobManager::prolog(const JobRequestSpec& spec) {
  JobLocks::Guard job_guard(job_locks_, spec.job_id);
  JobRecord rec;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = records_.find(spec.job_id);
    if (it != records_.end() && it->second.phase == JobPhase::kReady) return it->second;
    if (it != records_.end()) rec = it->second;
  }
  if (rec.phase != JobPhase::kNone) {
    // A retried prolog: undo the earlier attempt completely before starting over.
    ACCEL_TRY(runTearDown(rec, steps_.size()));
  }
  auto next = transition(rec.phase, JobEvent::kPrologBegin);
  ACCEL_CHECK(next.has_value());
  {
    std::lock_guard<std::mutex> g(mu_);
    for (uint32_t d : rec.devices) held_.erase(d);
    rec = JobRecord{};
    rec.spec = spec;
    rec.budget.carried_ns = std::max<int64_t>(0, spec.carried_ns);
    rec.phase = *next;
    rec.prolog_started_ns = clock_.wallNs();
    // A file system of the records that gave its reserve up takes no new job
    // (a node fault): the space is kept for the epilogs of the jobs that run
    // (space_reserve.h). The job is kept as failed, so its epilog reports its end.
    if (std::string why = space::shortage(); !why.empty()) {
      Error refused(ErrorCode::kUnavailable, why);
      keepFailedLocked(rec, refused);
      return refused;
    }
    auto devices = chooseDevices(spec);
    if (!devices.ok()) {
      keepFailedLocked(rec, devices.error());
      return devices.error();
    }
    rec.devices = *devices;
    deviceEnvLocked(rec);
    limitEnv(rec);
    held_.insert(rec.devices.begin(), rec.devices.end());
    ACCEL_TRY(saveLocked(rec));
  }
  size_t done = 0;
  Status setup = runSetUp(rec, &done);
  std::lock_guard<std::mutex> g(mu_);
  if (!setup.ok()) {
    // The failing step is rolled back too: it may have made part of its work.
    Status rollback = runTearDown(rec, std::min(done + 1, steps_.size()));
    rec.phase = *transition(rec.phase, JobEvent::kPrologFail);
    rec.last_error = setup.error().message();
    if (rollback.ok()) {
      for (uint32_t d : rec.devices) held_.erase(d);
      rec.devices.clear();
      keepFailedLocked(rec, setup.error());
    } else {
      (void)saveLocked(rec);  // keep it: the epilog must finish the cleanup
    }
    noteErrorLocked("prolog: job " + std::to_string(spec.job_id) + ": " + rec.last_error);
    return setup.error();
  }
  rec.phase = *transition(rec.phase, JobEvent::kPrologOk);
  rec.ready_ns = clock_.wallNs();
  ACCEL_TRY(saveLocked(rec));
  return rec;
}

Status JobManager::epilog(uint32_t job_id) {
  JobLocks::Guard job_guard(job_locks_, job_id);
  JobRecord rec;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = records_.find(job_id);
    if (it != records_.end())
      rec = it->second;
    else
      rec.spec.job_id = job_id;  // unknown: steps remove what a crash may have left
  }
  // Space the job's user could fill is given back before anything is
  // written; what fails here is tried again, and reported, by the tear-down.
  for (auto& step : steps_) (void)step->release(rec);
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = records_.find(job_id);
    rec.phase = *transition(rec.phase, JobEvent::kEpilogBegin);
    if (it != records_.end()) ACCEL_TRY(saveLocked(rec));
  }
  Status down = runTearDown(rec, steps_.size());
  std::lock_guard<std::mutex> g(mu_);
  if (!down.ok()) {
    rec.phase = *transition(rec.phase, JobEvent::kEpilogFail);
    rec.last_error = down.error().message();
    (void)saveLocked(rec);
    noteErrorLocked("epilog: job " + std::to_string(job_id) + ": " + rec.last_error);
    return down;
  }
  for (uint32_t d : rec.devices) held_.erase(d);
  records_.erase(job_id);
  return store_.remove(job_id);
}

Result<RecoverySummary> JobManager::recover() {
  ACCEL_TRY(store_.open());
  auto loaded = store_.loadAll();
  ACCEL_TRY(loaded);
  RecoverySummary sum;
  sum.problems = loaded->problems;
  for (auto& rec : loaded->records) {
    std::lock_guard<std::mutex> g(mu_);
    records_[rec.spec.job_id] = rec;
    held_.insert(rec.devices.begin(), rec.devices.end());
  }
  for (const auto& rec : loaded->records) {
    const uint32_t id = rec.spec.job_id;
    if (rec.phase == JobPhase::kProlog) {
      // The daemon died mid-prolog; slurmd saw the hook fail. Undo it all.
      Status s = runTearDown(rec, steps_.size());
      std::lock_guard<std::mutex> g(mu_);
      if (s.ok()) {
        for (uint32_t d : rec.devices) held_.erase(d);
        records_.erase(id);
        (void)store_.remove(id);
        ++sum.rolled_back;
        sum.ended.push_back(RecoveredEnd{
            .job_id = id, .rolled_back = true, .restart_count = rec.spec.restart_count});
      } else {
        JobRecord failed = rec;
        failed.phase = JobPhase::kFailed;
        failed.last_error = s.error().message();
        (void)saveLocked(failed);
        sum.problems.push_back("job " + std::to_string(id) + ": rollback: " + s.error().message());
      }
    } else if (rec.phase == JobPhase::kEpilog || rec.phase == JobPhase::kCleaned) {
      Status s = epilog(id);
      if (s.ok()) {
        ++sum.cleaned;
        sum.ended.push_back(
            RecoveredEnd{.job_id = id,
                         .rolled_back = false,
                         .appliance_used_ns = usedAtEndNs(rec.budget, clock_.wallNs()),
                         .time_limit = rec.budget.enforced_ns != 0,
                         .restart_count = rec.spec.restart_count});
      } else {
        sum.problems.push_back("job " + std::to_string(id) + ": epilog: " + s.error().message());
      }
    } else {
      ++sum.adopted;
    }
  }
  return sum;
}

// Applies `change` to a live job's record and persists it.
template <typename F>
static Status updateLive(std::map<uint32_t, JobRecord>& records, JobStore& store, uint32_t job_id,
                         F change) {
  auto it = records.find(job_id);
  if (it == records.end() || !holdsResources(it->second.phase))
    return Error(ErrorCode::kNotFound,
                 "job " + std::to_string(job_id) + " has no record on this node");
  if (!change(it->second)) return okStatus();  // nothing changed: nothing to write
  return store.save(it->second);
}

// Changes a live job's record under the lock: `change` returns whether the
// record changed (it is then persisted) and sets `tell` when the limit
// enforcer must look at the job again, which happens once the lock is free.
template <typename F>
Status JobManager::changeLive(uint32_t job_id, F change) {
  bool tell = false;
  Status s;
  {
    std::lock_guard<std::mutex> g(mu_);
    s = updateLive(records_, store_, job_id, [&](JobRecord& r) { return change(r, tell); });
  }
  if (tell && budget_listener_) budget_listener_();
  return s;
}

Status JobManager::taskStarted(uint32_t job_id, const TaskRef& task) {
  return changeLive(job_id, [&](JobRecord& r, bool& tell) {  // the enforcer signals these tasks
    for (const auto& t : r.tasks)
      if (t.pid == task.pid && t.start_ticks == task.start_ticks) return false;
    r.tasks.push_back(task);
    return tell = true;
  });
}

Status JobManager::taskExited(uint32_t job_id, int32_t pid) {
  return changeLive(job_id, [&](JobRecord& r, bool& tell) {
    auto n = r.tasks.size();
    std::erase_if(r.tasks, [&](const TaskRef& t) { return t.pid == pid; });
    return tell = n != r.tasks.size();
  });
}

// SLURM_EXTERN_CONT: the step that adopts processes for the job's whole
// life (PrologFlags=contain). It holds no work of the job's, so it never counts.
constexpr uint32_t kSlurmExternStep = 0xFFFFFFFC;

// Steps count against the appliance budget of a job holding local devices,
// and of an IPU job: its IPUs are remote (reached over IPUoF from the job's
// processes), so its steps are the time it holds them. A job with neither
// has nothing here that its steps could be using.
static bool noteSteps(JobRecord& r, int64_t now_ns) {
  if (r.devices.empty() && r.spec.ipus == 0) return false;
  bool running =
      std::any_of(r.steps.begin(), r.steps.end(), [](uint32_t s) { return s != kSlurmExternStep; });
  return noteLocalSteps(r.budget, running, now_ns);
}

Status JobManager::stepStarted(uint32_t job_id, uint32_t step_id) {
  return changeLive(job_id, [&](JobRecord& r, bool& tell) {
    if (std::find(r.steps.begin(), r.steps.end(), step_id) != r.steps.end()) return false;
    r.steps.push_back(step_id);
    tell = noteSteps(r, clock_.wallNs());
    return true;
  });
}

Status JobManager::stepEnded(uint32_t job_id, uint32_t step_id) {
  return changeLive(job_id, [&](JobRecord& r, bool& tell) {
    auto n = r.steps.size();
    std::erase(r.steps, step_id);
    std::erase_if(r.tasks, [&](const TaskRef& t) { return t.step_id == step_id; });
    if (n == r.steps.size()) return false;
    noteSteps(r, clock_.wallNs());
    tell = true;  // its tasks went too
    return true;
  });
}

Status JobManager::applianceJobSeen(uint32_t job_id, const appliance::ApplianceJob& job) {
  return changeLive(
      job_id, [&](JobRecord& r, bool& tell) { return tell = noteApplianceJob(r.budget, job); });
}

Status JobManager::limitActionTaken(uint32_t job_id, LimitAction action, int64_t at_ns) {
  std::lock_guard<std::mutex> g(mu_);
  return updateLive(records_, store_, job_id, [&](JobRecord& r) {
    int64_t* slot = action == LimitAction::kWarn      ? &r.budget.warned_ns
                    : action == LimitAction::kEnforce ? &r.budget.enforced_ns
                    : action == LimitAction::kKill    ? &r.budget.killed_ns
                                                      : nullptr;
    if (slot == nullptr || *slot != 0) return false;
    *slot = at_ns;
    return true;
  });
}

Result<bool> JobManager::claimSurrogate(uint32_t job_id, const std::string& appliance_job) {
  std::lock_guard<std::mutex> g(mu_);
  bool claimed = false;
  bool full = false;
  auto s = updateLive(records_, store_, job_id, [&](JobRecord& r) {
    if (std::find(r.surrogates.begin(), r.surrogates.end(), appliance_job) != r.surrogates.end())
      return false;
    if (r.surrogates.size() >= kMaxSurrogateStepsPerJob) {
      full = true;
      return false;
    }
    r.surrogates.push_back(appliance_job);
    return claimed = true;
  });
  ACCEL_TRY(s);
  if (full)
    return Error(ErrorCode::kConflict, "the job has " + std::to_string(kMaxSurrogateStepsPerJob) +
                                           " surrogate steps, the most it gets");
  return claimed;
}

Status JobManager::surrogateStepStarted(uint32_t job_id, uint32_t step_id) {
  bool full = false;
  auto s = changeLive(job_id, [&](JobRecord& r, bool& tell) {  // whom the warning spares
    if (std::find(r.surrogate_steps.begin(), r.surrogate_steps.end(), step_id) !=
        r.surrogate_steps.end())
      return false;
    if (r.surrogate_steps.size() >= kMaxSurrogateStepsPerJob) {
      full = true;
      return false;
    }
    r.surrogate_steps.push_back(step_id);
    return tell = true;
  });
  ACCEL_TRY(s);
  if (full)
    return Error(ErrorCode::kConflict, "the job has " + std::to_string(kMaxSurrogateStepsPerJob) +
                                           " surrogate steps reported, the most it gets");
  return okStatus();
}

LimitPolicy limitPolicy(const JobRequestSpec& spec, int64_t grace_ns) {
  return LimitPolicy{.limit_sec = spec.appliance_time_sec,
                     .signal = spec.appliance_signal,
                     .lead_sec = spec.appliance_signal_lead_sec,
                     .grace_ns = grace_ns};
}

std::optional<JobRecord> JobManager::job(uint32_t job_id) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = records_.find(job_id);
  if (it == records_.end()) return std::nullopt;
  return it->second;
}

std::vector<JobRecord> JobManager::jobs() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<JobRecord> out;
  for (const auto& [id, rec] : records_) out.push_back(rec);
  return out;
}

ManagerStats JobManager::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  ManagerStats s;
  s.jobs = records_.size();
  s.devices_total = inventory_.devices.size();
  s.devices_in_use = held_.size();
  s.last_errors.assign(errors_.begin(), errors_.end());
  return s;
}

void JobManager::replaceInventory(Inventory inventory) {
  std::lock_guard<std::mutex> g(mu_);
  inventory_ = std::move(inventory);
}

std::string JobManager::inventorySource() const {
  std::lock_guard<std::mutex> g(mu_);
  return inventory_.source;
}

}  // namespace accel::agent
