#include "accel/agentd/surrogate_steps.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>

#include "accel/agent/job_nodes.h"
#include "accel/common/clock.h"
#include "accel/common/log.h"
#include "accel/common/proc_stat.h"

namespace accel::agentd {

std::string surrogateStepName(const appliance::ApplianceJob& job) {
  return job.systems > 0 ? job.id + "-csx" + std::to_string(job.systems) : job.id;
}

bool wantsSurrogate(const agent::JobRecord& rec, const appliance::ApplianceJob& job) {
  // A placeholder for an entry that could not be read stands for no job a step could follow.
  if (!appliance::isValidJobId(job.id) || !job.unreadable.empty()) return false;
  if (job.state != appliance::ApplianceState::kRunning &&
      !(appliance::isFinal(job.state) && job.start_ns > 0))
    return false;
  return rec.phase == agent::JobPhase::kReady && !rec.spec.user.empty() &&
         agent::leadsJob(rec.spec);
}

namespace {

// `name` itself if it holds a '/', else the first executable match in PATH.
std::string resolve(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t at = 0; at <= dirs.size();) {
    size_t colon = std::min(dirs.find(':', at), dirs.size());
    std::string candidate = dirs.substr(at, colon - at) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    at = colon + 1;
  }
  return name;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Forks and execs `argv` as the job's user. Everything the child needs is
// prepared here: after fork only async-signal-safe calls are made.
pid_t spawnAsUser(const SurrogateSpec& spec, std::vector<std::string> argv,
                  std::vector<std::string> env) {
  std::vector<gid_t> groups(64);
  int n = static_cast<int>(groups.size());
  if (getgrouplist(spec.user.c_str(), spec.gid, groups.data(), &n) < 0)
    n = 0;  // too many: primary group only
  groups.resize(static_cast<size_t>(n));
  auto a = pointers(argv);
  auto e = pointers(env);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    // The daemon blocks TERM/INT/HUP and ignores PIPE; srun must not inherit that.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
    if (setgroups(groups.size(), groups.data()) != 0 || setgid(spec.gid) != 0 ||
        setuid(spec.uid) != 0 || (spec.uid != 0 && setuid(0) == 0) || chdir("/") != 0)
      _exit(126);
    execve(a[0], a.data(), e.data());
    _exit(127);
  }
  close(null);
  return pid;
}

std::vector<std::string> cmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t at = 0; at < all.size();) {
    size_t end = all.find('\0', at);
    if (end == std::string::npos) end = all.size();
    args.push_back(all.substr(at, end - at));
    at = end + 1;
  }
  return args;
}

// Whether `args` is the srun of spec's step as surrogateArgv makes it.
bool isSrunOf(const std::vector<std::string>& args, const SurrogateOptions& o,
              const SurrogateSpec& s) {
  const std::string job = std::to_string(s.job_id);
  const size_t n = args.size();
  return n >= 5 && args[0] == o.srun && args[1] == "--jobid=" + job &&
         args[n - 3] == "wait-appliance" && args[n - 2] == job && args[n - 1] == s.appliance_job;
}

std::string readText(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

// The kernel's boot time (CLOCK_REALTIME seconds), from /proc/stat.
int64_t bootTimeNs() {
  std::ifstream in("/proc/stat");
  std::string key;
  while (in >> key) {
    if (key == "btime") {
      int64_t seconds = 0;
      in >> seconds;
      return seconds * 1'000'000'000;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

// Everything but argv stays zero or empty when the process is gone.
ProcessFacts factsOf(pid_t pid) {
  ProcessFacts f;
  f.argv = cmdline(pid);
  std::istringstream status(readText("/proc/" + std::to_string(pid) + "/status", 4096));
  bool have_uid = false;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    have_uid = static_cast<bool>(fields >> f.real_uid >> f.effective_uid);
    break;
  }
  // A process whose uids cannot be read is nobody's: never the job user's.
  if (!have_uid) f.real_uid = f.effective_uid = static_cast<uid_t>(-1);
  auto ticks = readStartTicks(pid);
  const long hz = sysconf(_SC_CLK_TCK);
  if (ticks.ok() && hz > 0)
    f.start_ns = bootTimeNs() +
                 static_cast<int64_t>(*ticks / static_cast<uint64_t>(hz)) * 1'000'000'000 +
                 static_cast<int64_t>(*ticks % static_cast<uint64_t>(hz)) * (1'000'000'000 / hz);
  f.cgroup = readText("/proc/" + std::to_string(pid) + "/cgroup", 4096);
  return f;
}

// Every process with the step's srun command line.
std::vector<pid_t> findSruns(const SurrogateOptions& o, const SurrogateSpec& s) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (isSrunOf(cmdline(static_cast<pid_t>(pid)), o, s)) found.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return found;
}

}  // namespace

std::string whyNotSurrogateSrun(const ProcessFacts& p, const SurrogateOptions& options,
                                const SurrogateSpec& spec, const AdoptCheck& check) {
  if (!isSrunOf(p.argv, options, spec)) return "not the step's srun command line";
  if (p.real_uid != spec.uid || p.effective_uid != spec.uid)
    return "runs as uid " + std::to_string(p.real_uid) + "/" + std::to_string(p.effective_uid) +
           ", not the job user's " + std::to_string(spec.uid);
  if (p.start_ns <= 0) return "start time unknown";
  if (check.not_before_ns > 0 && p.start_ns < check.not_before_ns - kAdoptClockSlackNs)
    return "started before the job was ready here";
  if (check.not_after_ns > 0 && p.start_ns > check.not_after_ns + kAdoptClockSlackNs)
    return "started after this daemon looked";
  if (p.cgroup != check.cgroup) return "in another cgroup than the daemon's";
  return "";
}

std::vector<std::string> surrogateArgv(const SurrogateOptions& o, const SurrogateSpec& s) {
  const std::string job = std::to_string(s.job_id);
  return {o.srun,        "--jobid=" + job, "--overlap", "-J",           s.step_name,
          "--ntasks=1",  "--nodes=1",      "--quiet",   o.accelctl,     "--config",
          o.config_path, "wait-appliance", job,         s.appliance_job};
}

SurrogateSteps::SurrogateSteps(SurrogateOptions options, OnEnd on_end)
    : options_(std::move(options)), on_end_(std::move(on_end)) {
  options_.srun = resolve(options_.srun);
}

SurrogateSteps::~SurrogateSteps() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  if (wake_fd_ >= 0) {
    uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  for (const auto& [fd, w] : waited_) close(fd);
  for (int fd : {epoll_fd_, wake_fd_})
    if (fd >= 0) close(fd);
}

size_t SurrogateSteps::waiting() const {
  std::lock_guard<std::mutex> g(mu_);
  return waited_.size();
}

// Under mu_. False when the thread cannot be had: ends are then not reported
// (said in the log), and the steps run on.
bool SurrogateSteps::startThread() {
  if (thread_.joinable()) return true;
  if (epoll_fd_ < 0) epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (wake_fd_ < 0) wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  if (epoll_fd_ < 0 || wake_fd_ < 0 || epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) {
    log::error(std::string("surrogate: cannot wait for sruns: ") + std::strerror(errno));
    return false;
  }
  try {
    thread_ = std::thread(&SurrogateSteps::run, this);
  } catch (const std::system_error& e) {
    log::error(std::string("surrogate: cannot start the waiting thread: ") + e.what());
    return false;
  }
  return true;
}

// Waits for `pidfd` (taken over) to become readable.
void SurrogateSteps::watch(const SurrogateSpec& spec, pid_t child, int pidfd) {
  std::lock_guard<std::mutex> g(mu_);
  if (stop_ || !startThread()) {
    close(pidfd);
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = pidfd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, pidfd, &ev) != 0) {
    log::error("surrogate: job " + std::to_string(spec.job_id) +
               ": cannot wait for srun: " + std::strerror(errno));
    close(pidfd);
    return;
  }
  waited_.emplace(pidfd, Waited{spec, child});
}

// An end known now, reported by the thread (never on the caller's).
void SurrogateSteps::reportSoon(const SurrogateSpec& spec) {
  std::lock_guard<std::mutex> g(mu_);
  if (stop_ || !startThread()) return;
  ended_.push_back(spec);
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
}

void SurrogateSteps::run() {
  for (;;) {
    epoll_event events[16];
    int n = epoll_wait(epoll_fd_, events, 16, -1);
    if (n < 0 && errno != EINTR) {
      log::error(std::string("surrogate: epoll_wait: ") + std::strerror(errno));
      return;
    }
    std::vector<std::pair<SurrogateSpec, int>> ends;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (stop_) return;
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_fd_) {
          uint64_t count = 0;
          (void)!read(wake_fd_, &count, sizeof count);
          for (auto& spec : ended_) ends.emplace_back(std::move(spec), -1);
          ended_.clear();
          continue;
        }
        auto it = waited_.find(fd);
        if (it == waited_.end()) continue;
        int status = -1;
        if (it->second.child > 0)
          while (waitpid(it->second.child, &status, WNOHANG) < 0 && errno == EINTR) {
          }
        ends.emplace_back(std::move(it->second.spec), status);
        close(fd);  // and out of the epoll set
        waited_.erase(it);
      }
    }
    // Outside mu_: OnEnd may launch the next step. The destructor joins this
    // thread, so OnEnd never runs after it.
    for (const auto& [spec, status] : ends) on_end_(spec, status);
  }
}

void SurrogateSteps::launch(const SurrogateSpec& spec) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "USER=" + spec.user,
                                  "LOGNAME=" + spec.user, "HOME=/"};
  if (!options_.slurm_conf.empty()) env.push_back("SLURM_CONF=" + options_.slurm_conf);
  pid_t pid = spawnAsUser(spec, surrogateArgv(options_, spec), std::move(env));
  // The child is not reaped until the thread has its status, so its pidfd
  // can be had even if it has already ended.
  int fd = pid > 0 ? static_cast<int>(syscall(SYS_pidfd_open, pid, 0)) : -1;
  if (fd < 0) {
    if (pid > 0) {
      log::error("surrogate: job " + std::to_string(spec.job_id) +
                 ": pidfd_open: " + std::strerror(errno) + "; the step's end is not followed");
      return;
    }
    reportSoon(spec);
    return;
  }
  watch(spec, pid, fd);
}

void SurrogateSteps::adopt(const SurrogateSpec& spec, int64_t ready_ns, bool gone_means_ended) {
  AdoptCheck check{.not_before_ns = ready_ns,
                   .not_after_ns = wallNs(),
                   .cgroup = readText("/proc/self/cgroup", 4096)};
  int fd = -1;
  for (pid_t pid : findSruns(options_, spec)) {
    fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) continue;
    // Read after the pidfd is open: it names whatever held the pid then,
    // and a process that took the pid since the scan fails the checks.
    std::string why = whyNotSurrogateSrun(factsOf(pid), options_, spec, check);
    if (why.empty()) break;
    log::warning("surrogate: job " + std::to_string(spec.job_id) + ": process " +
                 std::to_string(pid) + " has the command line of the srun for " +
                 spec.appliance_job + " but " + why + "; left alone");
    close(fd);
    fd = -1;
  }
  if (fd >= 0)
    watch(spec, -1, fd);
  else if (gone_means_ended)
    reportSoon(spec);
}

}  // namespace accel::agentd
