#include "accel/agentd/job_processes.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <set>
#include <thread>

#include "accel/agentd/limit_enforcer.h"
#include "accel/agentd/task_signals.h"
#include "accel/common/log.h"
#include "accel/common/proc_stat.h"

namespace accel::agentd {

using agent::LimitAction;
using namespace std::chrono_literals;

namespace {

// Bounds: a cgroup file of pids is read whole (a step of 100,000 processes is
// ~700 KB); the tree below a step is walked this deep (v2: user/task_<n>,
// and whatever a job nests below that); a step that SIGKILL could not
// freeze is read again while new processes turn up (a fork loop), at most
// this often.
constexpr size_t kMaxCgroupFileBytes = 8 << 20;
constexpr int kMaxCgroupDepth = 8;
constexpr int kMaxPasses = 16;
// How long a v1 freezer may take to report FROZEN before the kill goes on
// anyway (a task in uninterruptible sleep holds it at FREEZING).
constexpr auto kFreezeWait = 100ms;

std::vector<std::string_view> splitOn(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t end = text.find(sep, start);
    out.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescapeMount(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (size_t k = 1; k <= 3; ++k) {
        char c = s[i + k];
        if (c < '0' || c > '7') ok = false;
        v = v * 8 + (c - '0');
      }
      if (ok) {
        out.push_back(static_cast<char>(v));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool parseU32(std::string_view text, uint32_t* out) {
  if (text.empty() || text.size() > 10) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// `path` (absolute, from /proc/PID/cgroup) below `root`, component-wise: the
// rest after root ("" when equal); nothing when not below it.
std::optional<std::string> below(const std::string& path, const std::string& root) {
  if (root == "/") return path == "/" ? std::string() : path;
  if (path == root) return std::string();
  if (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
      path[root.size()] == '/')
    return path.substr(root.size());
  return std::nullopt;
}

std::optional<std::string> readSmall(const std::string& path, size_t max = 64 << 10) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max) break;
  }
  ::close(fd);
  return out;
}

bool writeSmall(const std::string& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

bool isDir(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The pids of cgroup.procs in `dir` and every cgroup below it.
void collectPids(const std::string& dir, int depth, std::vector<int32_t>& out) {
  if (auto procs = readSmall(dir + "/cgroup.procs", kMaxCgroupFileBytes))
    for (auto line : splitOn(*procs, '\n')) {
      uint32_t pid = 0;
      if (parseU32(line, &pid) && pid > 0 && pid <= INT32_MAX) out.push_back(int32_t(pid));
    }
  if (depth >= kMaxCgroupDepth) return;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
    collectPids(dir + "/" + e->d_name, depth + 1, out);
  }
  ::closedir(d);
}

struct ProcInfo {
  uint32_t uid = 0;
  std::string comm;
  char state = '?';
};

std::optional<ProcInfo> procInfo(const std::string& proc_root, int32_t pid) {
  auto status = readSmall(proc_root + "/" + std::to_string(pid) + "/status");
  if (!status) return std::nullopt;
  ProcInfo info;
  bool uid_seen = false;
  for (auto line : splitOn(*status, '\n')) {
    if (line.rfind("Name:\t", 0) == 0) info.comm = std::string(line.substr(6));
    if (line.rfind("State:\t", 0) == 0 && line.size() > 7) info.state = line[7];
    if (line.rfind("Uid:\t", 0) == 0) {
      auto f = splitOn(line.substr(5), '\t');
      uid_seen = !f.empty() && parseU32(f[0], &info.uid);  // the real uid
    }
  }
  if (!uid_seen) return std::nullopt;
  return info;
}

// A process the limit may signal: the job's user's, and never slurmstepd
// (which v1 keeps in the step's cgroup, and which a root job shares a uid with).
bool ownedByJob(const ProcInfo& p, uint32_t uid) { return p.uid == uid && p.comm != "slurmstepd"; }

bool sendTo(int32_t pid, int sig) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return false;
  bool ok = syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0;
  ::close(fd);
  return ok;
}

std::string jobWho(uint32_t id) { return "limit: job " + std::to_string(id) + ": "; }

}  // namespace

std::vector<CgroupMount> cgroupMounts(std::string_view mountinfo) {
  std::vector<CgroupMount> out;
  for (auto line : splitOn(mountinfo, '\n')) {
    auto f = splitOn(line, ' ');
    auto dash = std::find(f.begin(), f.end(), std::string_view("-"));
    if (f.size() < 5 || dash == f.end() || dash + 3 > f.end()) continue;
    const std::string_view fstype = *(dash + 1);
    CgroupMount m;
    m.root = unescapeMount(f[3]);
    m.mount_point = unescapeMount(f[4]);
    if (fstype == "cgroup2") {
      m.version = CgroupVersion::kV2;
    } else if (fstype == "cgroup") {
      auto opts = splitOn(*(dash + 3), ',');
      if (std::find(opts.begin(), opts.end(), std::string_view("freezer")) == opts.end()) continue;
      m.version = CgroupVersion::kV1;
    } else {
      continue;
    }
    // A later mount on the same point hides the earlier one.
    std::erase_if(out, [&](const CgroupMount& o) { return o.mount_point == m.mount_point; });
    out.push_back(std::move(m));
  }
  return out;
}

std::optional<JobCgroup> jobCgroupFrom(std::string_view proc_cgroup,
                                       const std::vector<CgroupMount>& mounts, uint32_t job_id,
                                       uint32_t uid) {
  const std::string job = "job_" + std::to_string(job_id);
  const std::string user = "uid_" + std::to_string(uid);
  for (CgroupVersion want : {CgroupVersion::kV1, CgroupVersion::kV2}) {
    for (auto line : splitOn(proc_cgroup, '\n')) {
      auto f = splitOn(line, ':');
      if (f.size() < 3) continue;
      // The path may itself hold ':'; it is everything after the second one.
      std::string_view path = line.substr(f[0].size() + f[1].size() + 2);
      if (want == CgroupVersion::kV2 && !(f[0] == "0" && f[1].empty())) continue;
      if (want == CgroupVersion::kV1) {
        auto ctl = splitOn(f[1], ',');
        if (std::find(ctl.begin(), ctl.end(), std::string_view("freezer")) == ctl.end()) continue;
      }
      if (path.empty() || path[0] != '/') continue;
      auto parts = splitOn(path.substr(1), '/');
      size_t at = parts.size();
      int seen = 0;
      for (size_t i = 0; i < parts.size(); ++i) {
        if (parts[i] == "..") return std::nullopt;
        if (parts[i] == job) {
          ++seen;
          at = i;
        }
      }
      if (seen != 1) continue;
      if (want == CgroupVersion::kV1 && (at == 0 || parts[at - 1] != user)) continue;
      std::string cut;
      for (size_t i = 0; i <= at; ++i) cut += "/" + std::string(parts[i]);
      // The mount whose root holds the path, the deepest root first.
      const CgroupMount* best = nullptr;
      std::string rest;
      for (const auto& m : mounts) {
        if (m.version != want) continue;
        auto r = below(cut, m.root);
        if (r && (best == nullptr || m.root.size() > best->root.size())) {
          best = &m;
          rest = *r;
        }
      }
      if (best == nullptr) continue;
      return JobCgroup{want, best->mount_point + rest};
    }
  }
  return std::nullopt;
}

std::optional<uint32_t> stepOfCgroupName(std::string_view name) {
  if (name.rfind("step_", 0) != 0) return std::nullopt;
  name.remove_prefix(5);
  if (name == "batch") return agent::kBatchStepId;
  if (name == "extern") return kExternStepId;
  if (name == "interactive") return kInteractiveStepId;
  uint32_t step = 0;
  if (parseU32(name, &step)) return step;
  return std::nullopt;
}

bool actionReachesStep(const agent::JobRecord& rec, LimitAction action, uint32_t step) {
  if (step == kExternStepId) return false;  // Slurm's, ended with the job
  if (action == LimitAction::kKill) return true;
  const auto spared = agent::sparedSteps(rec);
  if (std::find(spared.begin(), spared.end(), step) != spared.end()) return false;
  if (action == LimitAction::kWarn) return step != agent::kBatchStepId;
  return true;
}

JobProcesses::JobProcesses(Options options) : options_(std::move(options)) {
  if (options_.mounts)
    mounts_ = *options_.mounts;
  else if (auto info = readSmall(options_.proc_root + "/self/mountinfo", 4 << 20))
    mounts_ = cgroupMounts(*info);
}

void JobProcesses::observe(const agent::JobRecord& rec) {
  if (rec.tasks.empty()) return;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = cache_.find(rec.spec.job_id);
    if (it != cache_.end() && it->second.ready_ns == rec.ready_ns) return;
  }
  (void)cgroupOf(rec);
}

// From the registered tasks that still run. The job's cgroup, once found, is
// kept for this run of the job (its tasks may all be gone by the kill); a
// task in no cgroup of the job is not taken as final (asked again next time:
// a cheap read), so that one early look never sends a job down the slower
// path through slurmctld.
std::optional<JobCgroup> JobProcesses::resolve(const agent::JobRecord& rec) {
  bool asked = false;
  for (const auto& t : rec.tasks) {
    if (t.pid <= 0) continue;
    auto text = readSmall(options_.proc_root + "/" + std::to_string(t.pid) + "/cgroup");
    auto ticks = readStartTicks(t.pid, options_.proc_root);
    // Read before and checked after: the text was the task's, not a later
    // process's with the same pid.
    if (!text || !ticks.ok() || *ticks != t.start_ticks) continue;
    auto found = jobCgroupFrom(*text, mounts_, rec.spec.job_id, rec.spec.uid);
    if (found && !isDir(found->dir)) found.reset();
    asked = true;
    if (!found) continue;
    std::lock_guard<std::mutex> g(mu_);
    cache_[rec.spec.job_id] = Cached{rec.ready_ns, found};
    noted(found);
    return found;
  }
  if (asked) {
    std::lock_guard<std::mutex> g(mu_);
    noted(std::nullopt);
  }
  return std::nullopt;
}

std::optional<JobCgroup> JobProcesses::cgroupOf(const agent::JobRecord& rec) {
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = cache_.find(rec.spec.job_id);
    if (it != cache_.end() && it->second.ready_ns == rec.ready_ns) return it->second.cgroup;
  }
  return resolve(rec);
}

// Under mu_. Said once per change of what the node's tracking is.
void JobProcesses::noted(std::optional<JobCgroup> found) {
  std::string now =
      !found ? "what slurmctld's own tracking finds of the job's steps (no cgroup process "
               "tracking: proctrack/linuxproc or proctrack/pgid); the registered tasks where "
               "slurmctld cannot be asked"
      : found->version == CgroupVersion::kV1
          ? "every process of the job's steps (cgroup v1, freezer)"
          : "every process of the job's steps (cgroup v2)";
  if (now == tracking_) return;
  tracking_ = now;
  if (options_.tracking_changed) options_.tracking_changed(now);
  if (!found)
    log::warning(
        "limit: this node's jobs are not in cgroups of their own (ProctrackType is not "
        "proctrack/cgroup): an appliance limit reaches what slurmctld's own process tracking "
        "finds of each step; a process that left its step's process tree or group outlives the "
        "limit");
  else
    log::info("limit: an appliance limit reaches " + now);
}

std::string JobProcesses::describe() const {
  std::lock_guard<std::mutex> g(mu_);
  return tracking_.empty() ? "not known yet (no job has had a task here since the start)"
                           : tracking_;
}

void JobProcesses::retain(const std::vector<uint32_t>& live_jobs) {
  std::lock_guard<std::mutex> g(mu_);
  std::erase_if(cache_, [&](const auto& kv) {
    return std::find(live_jobs.begin(), live_jobs.end(), kv.first) == live_jobs.end();
  });
}

std::vector<std::string> JobProcesses::stepDirs(const agent::JobRecord& rec, const JobCgroup& cg,
                                                LimitAction action) const {
  std::vector<std::string> out;
  DIR* d = ::opendir(cg.dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_type != DT_DIR) continue;
    auto step = stepOfCgroupName(e->d_name);
    if (!step || !actionReachesStep(rec, action, *step)) continue;
    std::string dir = cg.dir + "/" + e->d_name;
    // v2: the tasks are below user/, slurmstepd beside it in slurm/.
    if (cg.version == CgroupVersion::kV2 && isDir(dir + "/user")) dir += "/user";
    out.push_back(std::move(dir));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

int JobProcesses::signalStep(const std::string& dir, const JobCgroup& cg, uint32_t uid, int sig,
                             bool freeze) const {
  int reached = 0;
  if (sig == SIGKILL && cg.version == CgroupVersion::kV2 && dir.ends_with("/user")) {
    std::vector<int32_t> pids;
    collectPids(dir, 0, pids);
    if (writeSmall(dir + "/cgroup.kill", "1")) return static_cast<int>(pids.size());
    // An older kernel (before 5.14): one by one, below.
  }
  const bool frozen = freeze && writeSmall(dir + "/freezer.state", "FROZEN");
  if (frozen) {
    const auto until = std::chrono::steady_clock::now() + kFreezeWait;
    while (std::chrono::steady_clock::now() < until) {
      auto state = readSmall(dir + "/freezer.state");
      if (state && state->rfind("FROZEN", 0) == 0) break;
      std::this_thread::sleep_for(1ms);
    }
  }
  std::set<int32_t> done;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    std::vector<int32_t> pids;
    collectPids(dir, 0, pids);
    bool fresh = false;
    for (int32_t pid : pids) {
      if (!done.insert(pid).second) continue;
      fresh = true;
      // A pid just listed and then reused by another process of the same
      // user is the one race left, as in Slurm's own proctrack.
      auto info = procInfo(options_.proc_root, pid);
      if (!info || !ownedByJob(*info, uid)) continue;
      // srun, on SIGTERM, kills its step at once (SIGKILL through slurmctld),
      // which would cut the grace of the step's tasks short: they get SIGTERM
      // from here, and srun ends with them; SIGKILL after the grace reaches
      // srun too.
      if (sig == SIGTERM && info->comm == "srun") continue;
      if (sendTo(pid, sig)) ++reached;
    }
    // One pass, as Slurm's own signal of a step, but for a SIGKILL that could
    // not freeze the step: a process forked by a handler of SIGTERM or of the
    // warning (a checkpoint's helper) is not the signal's to end; one forked
    // past a SIGKILL is read again until no new one turns up (a fork loop).
    if (!fresh || frozen || sig != SIGKILL) break;
  }
  if (frozen) writeSmall(dir + "/freezer.state", "THAWED");
  return reached;
}

int JobProcesses::signal(const agent::JobRecord& rec, LimitAction action, int sig) {
  if (action == LimitAction::kWarn && rec.spec.appliance_signal_batch)
    return signalTasks(tasksToSignal(rec, action), sig);  // the batch shell alone
  auto cg = cgroupOf(rec);
  if (!cg) {
    // slurmctld first (followUp): Slurm's tracking finds a task's whole tree
    // only while the task lives; a task that ended on a signal sent from here
    // would leave its children to init, out of every tracking's reach.
    if (options_.ask_slurm) return kThroughSlurmctld;
    return signalTasks(tasksToSignal(rec, action), sig);
  }
  int reached = 0;
  const bool freeze = action == LimitAction::kKill && cg->version == CgroupVersion::kV1;
  for (const auto& dir : stepDirs(rec, *cg, action))
    reached += signalStep(dir, *cg, rec.spec.uid, sig, freeze);
  return reached;
}

std::vector<Leftover> JobProcesses::leftovers(const agent::JobRecord& rec,
                                              const JobCgroup& cg) const {
  std::vector<Leftover> out;
  for (const auto& dir : stepDirs(rec, cg, LimitAction::kKill)) {
    std::vector<int32_t> pids;
    collectPids(dir, 0, pids);
    for (int32_t pid : pids) {
      auto info = procInfo(options_.proc_root, pid);
      if (!info || !ownedByJob(*info, rec.spec.uid) || info->state == 'Z') continue;
      out.push_back(Leftover{pid, info->comm, info->state});
    }
  }
  return out;
}

std::vector<Leftover> JobProcesses::followUp(const agent::JobRecord& rec, LimitAction action,
                                             int sig, std::chrono::milliseconds settle) {
  auto cg = cgroupOf(rec);
  if (!cg) {
    if (!options_.ask_slurm || (action == LimitAction::kWarn && rec.spec.appliance_signal_batch))
      return {};
    auto s = options_.ask_slurm(rec.spec.job_id, sig, action == LimitAction::kWarn);
    if (!s.ok()) {
      const int reached = signalTasks(tasksToSignal(rec, action), sig);
      log::warning(jobWho(rec.spec.job_id) + "slurmctld did not signal the job (" +
                   s.error().message() + "); signal " + std::to_string(sig) + " sent to " +
                   std::to_string(reached) + " registered task(s)");
    } else if (action == LimitAction::kKill) {
      signalTasks(tasksToSignal(rec, action), sig);  // twice does no harm to SIGKILL
    }
    return {};
  }
  if (action != LimitAction::kKill) return {};
  const auto until = std::chrono::steady_clock::now() + settle;
  for (;;) {
    auto left = leftovers(rec, *cg);
    if (left.empty() || std::chrono::steady_clock::now() >= until) return left;
    std::this_thread::sleep_for(20ms);
  }
}

}  // namespace accel::agentd
