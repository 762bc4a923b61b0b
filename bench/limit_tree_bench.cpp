// From an appliance limit to the last process of a job gone, for jobs of 200
// processes: bench/limit_tree_job.sh (a bash shell and 199 `sleep`s) as the
// task of a GPU job with a 2 s appliance limit, in a cgroup v1 freezer of
// Slurm's proctrack/cgroup layout, run by an ordinary uid. Half the jobs obey
// SIGTERM; the other half ignore it, so that the agent's SIGKILL after
// ApplianceKillGrace (1 s here) ends them and their figure includes the grace.
//
// The cgroups are real (private_freezer.h): a directory of this program's own
// below the freezer hierarchy's root holds
// slurm_node1/uid_<uid>/job_<id>/step_0 for each job, and accel-agentd runs
// in a private mount namespace where that directory, not the root, is mounted
// at /sys/fs/cgroup/freezer, as each node of scripts/slurm-sandbox has it.
// Only the top task (the shell) is registered with the agent; it finds the
// other 199 through the cgroup. Every process's pidfd is in one epoll set, so
// each exit is seen when it happens. The deadline is the one the agent
// computed (start of the job's steps + limit, from its job record).
//
// Each round runs up to four jobs (one per GPU of the ipa20 topology),
// obeying and ignoring in turn; their steps start 250 ms apart, so that no
// two limit actions of a round fall within 250 ms of each other. Every
// cgroup made here is removed at the end, also after a failure or SIGINT.
//
//   limit_tree_bench --agentd P --accelctl P --topology XML --job-script SH
//                    [--jobs N] [--processes N] [--limit-seconds S] [--uid U]
// N jobs with SIGTERM obeyed and N with it ignored; output: one JSON object.
//
//   limit_tree_bench --watch-cgroup DIR [--processes N] [--timeout-seconds S]
// The Slurm side (bench/run): waits until the cgroup DIR (a job's
// step_batch) holds N processes besides slurmstepd, then until every one of
// them has exited; prints when the first and the last went (CLOCK_REALTIME).
//
// Runs as root (cgroups, a mount namespace, the job's uid). Not a test: it
// asserts nothing.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "accel/common/proc_stat.h"
#include "accel/ipc/control_requests.h"
#include "accel/ipc/control_socket.h"
#include "accel/schemas/control_generated.h"
#include "private_freezer.h"
#include "process_harness.h"

namespace {

using accel::bench::kFreezer;
using accel::bench::pidsOf;
using accel::bench::PrivateFreezer;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kNode = "node1";  // SLURMD_NODENAME of AgentHarness::jobEnv
constexpr int kGpus = 4;                // the ipa20 topology's
constexpr auto kStagger = 250ms;        // between the steps' starts in a round
constexpr int kGraceSeconds = 1;        // ApplianceKillGrace

volatile sig_atomic_t g_stop = 0;

int64_t realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

std::string commOf(pid_t pid) {
  std::string comm = slurp("/proc/" + std::to_string(pid) + "/comm");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return comm;
}

// The first three fields of /proc/loadavg.
std::string loadAverage() {
  std::istringstream in(slurp("/proc/loadavg"));
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

int pidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

// Reaps the process behind `pidfd` when it is this program's child (a
// subreaper: orphans of the job come here); others' children are theirs.
void reap(int pidfd) {
  siginfo_t info{};
  while (waitid(P_PIDFD, static_cast<id_t>(pidfd), &info, WEXITED) != 0 && errno == EINTR) {
  }
}

json summary(std::vector<double> v) {
  if (v.empty()) return {{"n", 0}};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
  };
  return {{"n", v.size()},
          {"p50_us", at(0.5)},
          {"p99_us", at(0.99)},
          {"max_us", v.back()},
          {"min_us", v.front()}};
}

// Pidfds of processes in one epoll set; `wait` reports exits as they come.
class ExitWatch {
 public:
  ExitWatch() : ep_(epoll_create1(EPOLL_CLOEXEC)) {}
  ~ExitWatch() {
    for (auto& [fd, tag] : tags_) ::close(fd);
    if (ep_ >= 0) ::close(ep_);
  }
  ExitWatch(const ExitWatch&) = delete;
  ExitWatch& operator=(const ExitWatch&) = delete;

  // False when the process is already gone (or the set refuses it).
  bool add(pid_t pid, int tag) {
    int fd = pidfdOpen(pid);
    if (fd < 0) return false;
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    if (epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &e) != 0) {
      ::close(fd);
      return false;
    }
    tags_[fd] = tag;
    ++live_;
    return true;
  }
  int live() const { return live_; }
  // Sends `sig` to every process of `tag` still watched; how many it reached.
  int signal(int tag, int sig) {
    int reached = 0;
    for (auto& [fd, t] : tags_)
      if (t == tag && std::find(done_.begin(), done_.end(), fd) == done_.end())
        reached += syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0;
    return reached;
  }
  // Waits up to `timeout_ms` for exits; calls gone(tag, when) for each, the
  // moment being when this program woke to it.
  template <typename F>
  bool wait(int timeout_ms, F&& gone) {
    epoll_event ev[64];
    int n = epoll_wait(ep_, ev, 64, timeout_ms);
    if (n <= 0) return false;
    const int64_t now = realtimeNs();
    for (int i = 0; i < n; ++i) {
      int fd = ev[i].data.fd;
      epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr);
      gone(tags_[fd], now);
      done_.push_back(fd);
      --live_;
    }
    return true;
  }
  // Reaps and closes what has gone so far.
  void release() {
    for (int fd : done_) {
      reap(fd);
      tags_.erase(fd);
      ::close(fd);
    }
    done_.clear();
  }

 private:
  int ep_;
  std::map<int, int> tags_;
  std::vector<int> done_;
  int live_ = 0;
};

// ---------------------------------------------------------------------------
// The Slurm side: a job's step cgroup in the sandbox, watched from outside.

int watchCgroup(const std::string& dir, size_t want, int timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  auto left = [&] {
    return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                until - std::chrono::steady_clock::now())
                                .count());
  };
  std::vector<pid_t> pids;
  for (;;) {
    pids.clear();
    for (pid_t pid : pidsOf(slurp(dir + "/cgroup.procs")))
      if (commOf(pid) != "slurmstepd") pids.push_back(pid);
    if (pids.size() >= want) break;
    if (left() <= 0 || g_stop) {
      std::printf("%s\n", json{{"cgroup", dir},
                               {"error", "the job's processes did not all start"},
                               {"seen", pids.size()}}
                              .dump()
                              .c_str());
      return 1;
    }
    std::this_thread::sleep_for(50ms);
  }
  // Every process of the job is alive until its limit, a minute away: the
  // pids just listed are theirs.
  ExitWatch watch;
  int missed = 0;
  for (pid_t pid : pids)
    if (!watch.add(pid, 0)) ++missed;
  const int64_t ready_ns = realtimeNs();
  int64_t first = 0, last = 0;
  while (watch.live() > 0 && left() > 0 && !g_stop)
    watch.wait(std::min(left(), 1000), [&](int, int64_t at) {
      if (first == 0) first = at;
      last = at;
    });
  json out{{"cgroup", dir},        {"processes", pids.size()}, {"missed", missed},
           {"ready_ns", ready_ns}, {"first_gone_ns", first},   {"last_gone_ns", last},
           {"left", watch.live()}};
  std::printf("%s\n", out.dump().c_str());
  return watch.live() == 0 && missed == 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------
// The agent's side.

bool send(const std::string& socket, const std::vector<uint8_t>& request) {
  auto reply = accel::ipc::call(socket, request.data(), request.size(), 2s);
  return reply.ok() && flatbuffers::GetRoot<accel::control::Reply>(reply->data())->outcome() ==
                           accel::control::Outcome::Ok;
}

// The deadline the agent computed: the start of the steps' run + the limit.
int64_t deadlineOf(const std::string& run_dir, uint32_t job, int64_t limit_sec) {
  auto j = json::parse(slurp(run_dir + "/state/" + std::to_string(job) + ".json"), nullptr, false);
  if (!j.is_object() || !j.contains("appliance_runs") || j["appliance_runs"].empty()) return 0;
  return j["appliance_runs"][0][1].get<int64_t>() + limit_sec * 1'000'000'000;
}

struct Job {
  uint32_t id = 0;
  bool ignore = false;
  std::string step;  // the step's cgroup, below the private directory
  pid_t top = -1;
  int processes = 0;
  int64_t first_gone = 0, last_gone = 0;
  bool failed = false;
};

struct Settings {
  std::string script;
  int processes = 200;
  int64_t limit = 2;
  uid_t uid = 4242;
};

// The job's task: into the step's cgroup (as slurmstepd puts a task there),
// then the job's uid, then the job script.
pid_t spawnTask(const PrivateFreezer& cg, const Job& job, const Settings& s) {
  const std::string procs = cg.below(job.step + "/cgroup.procs");
  const std::string n = std::to_string(s.processes);
  pid_t pid = fork();
  if (pid != 0) return pid;
  int fd = openat(cg.rootFd(), procs.c_str(), O_WRONLY);
  const std::string me = std::to_string(getpid());
  if (fd < 0 || ::write(fd, me.data(), me.size()) != static_cast<ssize_t>(me.size())) _exit(126);
  int null = ::open("/dev/null", O_RDWR);
  if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0) _exit(126);
  close_range(3, ~0U, 0);
  setsid();
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) signal(sig, SIG_DFL);
  if (setgroups(0, nullptr) != 0 || setgid(s.uid) != 0 || setuid(s.uid) != 0) _exit(126);
  execl("/bin/bash", "bash", "-c", s.script.c_str(), "limit_tree_job", n.c_str(),
        job.ignore ? "ignored" : "obeyed", nullptr);
  _exit(127);
}

// Waits until every process of the job is in its step's cgroup, and watches
// each with `tag`. False when they did not all start.
bool watchJob(const PrivateFreezer& cg, Job& job, const Settings& s, ExitWatch& watch, int tag) {
  std::vector<pid_t> pids;
  for (int tries = 0; tries < 400 && !g_stop; ++tries) {
    pids = pidsOf(cg.read(job.step + "/cgroup.procs"));
    if (pids.size() >= static_cast<size_t>(s.processes)) break;
    std::this_thread::sleep_for(25ms);
  }
  for (pid_t pid : pids)
    if (watch.add(pid, tag)) ++job.processes;
  if (job.processes == s.processes) return true;
  std::fprintf(stderr, "limit_tree_bench: job %u: %d of %d processes started\n", job.id,
               job.processes, s.processes);
  return false;
}

// The floor under the agent's figure: the same job, every process of which
// this program signals itself (SIGTERM through the pidfds it holds, nothing
// to look up), one job at a time; from the first signal to the last process
// gone, in µs. Nothing when the job failed.
std::optional<double> floorJob(PrivateFreezer& cg, const Settings& s, uint32_t id) {
  Job job;
  job.id = id;
  job.step = std::string("slurm_") + kNode + "/uid_" + std::to_string(s.uid) + "/job_" +
             std::to_string(id) + "/step_0";
  const std::string dir = job.step.substr(0, job.step.rfind('/'));
  std::optional<double> out;
  ExitWatch watch;
  if (cg.makeDirs(job.step) && (job.top = spawnTask(cg, job, s)) > 0 &&
      watchJob(cg, job, s, watch, 0)) {
    std::this_thread::sleep_for(100ms);
    const int64_t t0 = realtimeNs();
    watch.signal(0, SIGTERM);
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (watch.live() > 0 && !g_stop && std::chrono::steady_clock::now() < until)
      watch.wait(200, [&](int, int64_t when) { job.last_gone = std::max(job.last_gone, when); });
    if (watch.live() == 0) out = static_cast<double>(job.last_gone - t0) / 1000.0;
  }
  cg.remove(dir);  // ends whatever is left
  watch.release();
  return out;
}

// The agent's log: per job, when it sent SIGTERM (us after the deadline) and
// how many processes SIGTERM and SIGKILL reached.
struct Logged {
  double term_late_us = -1;
  int term_reached = -1, kill_reached = 0;
};

std::map<uint32_t, Logged> agentLog(const std::string& path) {
  std::map<uint32_t, Logged> out;
  std::ifstream log(path);
  for (std::string line; std::getline(log, line);) {
    auto at = line.find("limit: job ");
    if (at == std::string::npos) continue;
    uint32_t id = static_cast<uint32_t>(std::strtoul(line.c_str() + at + 11, nullptr, 10));
    auto count = [&](const char* before) {
      auto p = line.find(before);
      return p == std::string::npos ? -1 : std::atoi(line.c_str() + p + std::strlen(before));
    };
    if (auto late = line.find(" us after the deadline"); late != std::string::npos) {
      auto from = line.rfind(' ', late - 1);
      out[id].term_late_us = std::stod(line.substr(from + 1, late - from - 1));
      out[id].term_reached = count("SIGTERM sent to ");
    } else if (int k = count("SIGKILL sent to "); k >= 0) {
      out[id].kill_reached = k;
    }
  }
  return out;
}

int runAgent(std::map<std::string, std::string>& a) {
  Settings s;
  s.processes = std::stoi(a["--processes"]);
  s.limit = std::stoll(a["--limit-seconds"]);
  s.uid = static_cast<uid_t>(std::stoul(a["--uid"]));
  s.script = slurp(a["--job-script"]);
  const int jobs_each = std::stoi(a["--jobs"]);
  if (s.script.empty() || s.processes < 2 || s.limit < 1 || jobs_each < 1 || s.uid == 0) {
    std::fprintf(stderr,
                 "limit_tree_bench: need a job script, --processes > 1, --limit-seconds "
                 ">= 1, --jobs >= 1 and an ordinary --uid\n");
    return 2;
  }
  // Declared first, so removed last: its clean-up may reap any child of this
  // program, the daemon's too, so it comes once the daemon is gone.
  PrivateFreezer cg;
  std::string error;
  if (!cg.setUp(&error)) {
    std::fprintf(stderr, "limit_tree_bench: %s\n", error.c_str());
    return 1;
  }
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  // The agent asks slurmctld to signal a job whose cgroup it cannot find;
  // never a real one (bench/run has a sandbox's SLURM_CONF in its
  // environment).
  ::unsetenv("SLURM_CONF");
  const std::string load_before = loadAverage();
  int failures = 0;
  std::vector<Job> done;
  {
    accel::testing::AgentHarness h({a["--agentd"], a["--accelctl"], a["--topology"]});
    h.writeConfig("ApplianceKillGrace=" + std::to_string(kGraceSeconds) + "\n");
    if (!h.start()) {
      std::fprintf(stderr, "limit_tree_bench: daemon did not start: %s\n", h.startError().c_str());
      return 1;
    }
    const std::string slurm = std::string("slurm_") + kNode + "/uid_" + std::to_string(s.uid);
    uint32_t next_job = 9000;
    for (int started = 0; started < 2 * jobs_each && !g_stop;) {
      (void)h.waitNotify("\n-never-\n", 50ms);  // read STATUS= as systemd would
      std::vector<Job> round;
      ExitWatch watch;
      for (int g = 0; g < kGpus && started < 2 * jobs_each; ++g, ++started) {
        Job job;
        job.id = next_job++;
        job.ignore = started % 2 == 1;
        job.step = slurm + "/job_" + std::to_string(job.id) + "/step_0";
        auto env = accel::testing::AgentHarness::jobEnv(job.id, s.uid, std::to_string(g));
        env["SPANK_ACCEL_APPLIANCE_TIME"] = std::to_string(s.limit);
        env["SPANK_ACCEL_APPLIANCE_TIME_SOURCE"] = "option";
        if (!cg.makeDirs(job.step) || h.ctl({"prolog"}, env).exit_code != 0) {
          std::fprintf(stderr, "limit_tree_bench: job %u: no cgroup or prolog failed\n", job.id);
          job.failed = true;
        } else {
          job.top = spawnTask(cg, job, s);
        }
        round.push_back(job);
      }
      // Every process of every job of the round started, each in its job's
      // cgroup; then their pidfds.
      for (size_t i = 0; i < round.size(); ++i)
        if (!round[i].failed && !watchJob(cg, round[i], s, watch, static_cast<int>(i)))
          round[i].failed = true;
      // The steps start (and the limits' clocks with them) kStagger apart.
      auto at = std::chrono::steady_clock::now();
      for (auto& job : round) {
        if (job.failed) continue;
        std::this_thread::sleep_until(at);
        at += kStagger;
        auto ticks = accel::readStartTicks(job.top);
        if (!ticks.ok() ||
            !send(h.socketPath(), accel::ipc::encodeStepRequest(
                                      job.id, 0, accel::ipc::StepEventKind::kStarted, 0)) ||
            !send(h.socketPath(),
                  accel::ipc::encodeTaskRequest(job.id, 0, job.top, *ticks,
                                                accel::ipc::TaskEventKind::kStarted, 0))) {
          std::fprintf(stderr, "limit_tree_bench: job %u: step or task report refused\n", job.id);
          job.failed = true;
        }
      }
      // Bounded: a job the agent never ends must not hang the run.
      const auto until = std::chrono::steady_clock::now() + kStagger * kGpus +
                         std::chrono::seconds(s.limit + kGraceSeconds + 10);
      while (watch.live() > 0 && !g_stop && std::chrono::steady_clock::now() < until)
        watch.wait(200, [&](int i, int64_t when) {
          auto& job = round[static_cast<size_t>(i)];
          if (job.first_gone == 0) job.first_gone = when;
          job.last_gone = std::max(job.last_gone, when);
          --job.processes;
        });
      for (auto& job : round) {
        if (job.top <= 0) continue;
        if (job.processes != 0) {
          std::fprintf(stderr, "limit_tree_bench: job %u: %d processes left\n", job.id,
                       job.processes);
          job.failed = true;
          cg.remove(job.step);  // ends them
        }
        const int64_t deadline = deadlineOf(h.runDir(), job.id, s.limit);
        if (deadline == 0) job.failed = true;
        job.first_gone -= deadline;
        job.last_gone -= deadline;
      }
      watch.release();
      for (auto& job : round) {
        (void)h.ctl({"epilog"}, accel::testing::AgentHarness::jobEnv(job.id, s.uid));
        if (!cg.remove(std::string("slurm_") + kNode + "/uid_" + std::to_string(s.uid) + "/job_" +
                       std::to_string(job.id))) {
          std::fprintf(stderr, "limit_tree_bench: job %u: its cgroup stays\n", job.id);
          job.failed = true;
        }
        failures += job.failed;
        if (getenv("LIMIT_BENCH_TRACE") && !job.failed)
          std::fprintf(stderr, "job %u (%s): last gone %.0f us after the deadline\n", job.id,
                       job.ignore ? "ignored" : "obeyed", static_cast<double>(job.last_gone) / 1e3);
        done.push_back(job);
      }
    }
    h.terminate();
    std::vector<double> floor;
    int floor_failed = 0;
    for (int i = 0; i < jobs_each && !g_stop; ++i) {
      auto t = floorJob(cg, s, next_job++);
      if (t)
        floor.push_back(*t);
      else
        ++floor_failed;
    }
    auto logged = agentLog(h.dir() + "/agentd.log");
    json out{{"processes", s.processes},
             {"limit_seconds", s.limit},
             {"kill_grace_seconds", kGraceSeconds},
             {"uid", s.uid},
             {"jobs_at_once", kGpus},
             {"stagger_ms", kStagger.count()},
             {"failures", failures},
             {"interrupted", g_stop != 0}};
    for (bool ignore : {false, true}) {
      std::vector<double> last, first, term;
      int term_min = INT_MAX, term_max = -1, kill_min = INT_MAX, kill_max = -1, n = 0, failed = 0;
      for (const auto& job : done) {
        if (job.ignore != ignore) continue;
        ++n;
        if (job.failed) {
          ++failed;
          continue;
        }
        last.push_back(static_cast<double>(job.last_gone) / 1000.0);
        first.push_back(static_cast<double>(job.first_gone) / 1000.0);
        auto it = logged.find(job.id);
        if (it == logged.end()) continue;
        if (it->second.term_late_us >= 0) term.push_back(it->second.term_late_us);
        term_min = std::min(term_min, it->second.term_reached);
        term_max = std::max(term_max, it->second.term_reached);
        kill_min = std::min(kill_min, it->second.kill_reached);
        kill_max = std::max(kill_max, it->second.kill_reached);
      }
      out[ignore ? "ignored" : "obeyed"] = {
          {"jobs", n},
          {"failed", failed},
          {"last_gone_after_deadline", summary(last)},
          {"first_gone_after_deadline", summary(first)},
          {"sigterm_sent_after_deadline", summary(term)},
          {"sigterm_reached", {{"min", term_min == INT_MAX ? -1 : term_min}, {"max", term_max}}},
          {"sigkill_reached", {{"min", kill_min == INT_MAX ? -1 : kill_min}, {"max", kill_max}}}};
    }
    out["load_average"] = {load_before, loadAverage()};
    out["floor"] = {{"jobs", jobs_each},
                    {"failed", floor_failed},
                    {"last_gone_after_first_signal", summary(floor)}};
    failures += floor_failed;
    out["failures"] = failures;
    std::printf("%s\n", out.dump(2).c_str());
  }
  if (!cg.removeAll()) {
    std::fprintf(stderr, "limit_tree_bench: could not remove its cgroups below %s\n", kFreezer);
    return 1;
  }
  return failures == 0 && !g_stop ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> a{{"--jobs", "50"},
                                       {"--processes", "200"},
                                       {"--limit-seconds", "2"},
                                       {"--uid", "4242"},
                                       {"--timeout-seconds", "300"}};
  for (int i = 1; i + 1 < argc; i += 2) a[argv[i]] = argv[i + 1];
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop = 1; };
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  if (a.count("--watch-cgroup"))
    return watchCgroup(a["--watch-cgroup"], std::stoul(a["--processes"]),
                       std::stoi(a["--timeout-seconds"]));
  if (!a.count("--agentd") || !a.count("--accelctl") || !a.count("--topology") ||
      !a.count("--job-script") || argc % 2 != 1) {
    std::fprintf(stderr,
                 "usage: limit_tree_bench --agentd P --accelctl P --topology XML --job-script SH"
                 " [--jobs N] [--processes N] [--limit-seconds S] [--uid U]\n"
                 "       limit_tree_bench --watch-cgroup DIR [--processes N]"
                 " [--timeout-seconds S]\n");
    return 2;
  }
  return runAgent(a);
}
