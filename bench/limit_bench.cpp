// How late the appliance limit's warning (SIGUSR1, --lead-seconds ahead) and
// SIGTERM reach a task, against the times the agent itself computed (start
// of the job's steps + limit, read from the job record). Runs accel-agentd on
// a captured topology; each round runs four jobs at once, each with one task:
// a child of this program that notes CLOCK_REALTIME in its signal handlers.
// --kind gpu: one GPU job per GPU of the topology; --kind ipu: IPU-POD jobs
// of 2 IPUs each, their partitions made by the fake V-IPU controller of
// --hw-mock (the clock of an IPU job runs while its steps run).
// Each task runs as the job's uid in the job's cgroup v1 freezer, in Slurm's
// proctrack/cgroup layout (private_freezer.h), so that the agent reaches it
// as it reaches a job's processes on a node that tracks them with cgroups;
// without a cgroup it would ask slurmctld first. Runs as root.
// Output: one JSON object on stdout. Not a test: it asserts nothing.
// For comparison: slurmctld checks time limits every 30 s and waits KillWait
// (30 s by default) before SIGKILL, so Slurm's own slack is 30-90 s.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
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

using accel::bench::PrivateFreezer;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr uid_t kUid = 4242;  // the jobs' user

// A job's step cgroup, below the private freezer directory.
std::string stepCgroup(uint32_t job) {
  return "slurm_node1/uid_" + std::to_string(kUid) + "/job_" + std::to_string(job) + "/step_0";
}

int64_t realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// One note of a task: its pid, the signal, when it arrived.
struct Note {
  int64_t pid;
  int64_t sig;
  int64_t at_ns;
};

// The task: in the job's step cgroup, as the job's uid; writes a Note to `fd`
// for SIGUSR1 and for SIGTERM, and exits on SIGTERM.
pid_t spawnTask(int fd, const PrivateFreezer& cg, uint32_t job) {
  const std::string procs = cg.below(stepCgroup(job) + "/cgroup.procs");
  pid_t pid = fork();
  if (pid != 0) return pid;
  int cgfd = openat(cg.rootFd(), procs.c_str(), O_WRONLY);
  const std::string me = std::to_string(getpid());
  if (cgfd < 0 || write(cgfd, me.data(), me.size()) != static_cast<ssize_t>(me.size())) _exit(126);
  close(cgfd);
  if (setgroups(0, nullptr) != 0 || setgid(kUid) != 0 || setuid(kUid) != 0) _exit(126);
  static int out;
  out = fd;
  struct sigaction sa {};
  sa.sa_handler = [](int sig) {
    Note note{getpid(), sig, realtimeNs()};
    (void)!write(out, &note, sizeof note);
    if (sig == SIGTERM) _exit(0);
  };
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (;;) pause();
}

// Waits (up to 2 s) until `pid` is in the job's step cgroup.
bool inCgroup(const PrivateFreezer& cg, uint32_t job, pid_t pid) {
  for (int tries = 0; tries < 2000; ++tries) {
    auto pids = accel::bench::pidsOf(cg.read(stepCgroup(job) + "/cgroup.procs"));
    if (std::find(pids.begin(), pids.end(), pid) != pids.end()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

bool send(const std::string& socket, const std::vector<uint8_t>& request) {
  auto reply = accel::ipc::call(socket, request.data(), request.size(), 2s);
  return reply.ok() && flatbuffers::GetRoot<accel::control::Reply>(reply->data())->outcome() ==
                           accel::control::Outcome::Ok;
}

bool startStepAndTask(const std::string& socket, uint32_t job, pid_t pid) {
  auto ticks = accel::readStartTicks(pid);
  if (!ticks.ok()) return false;
  return send(socket,
              accel::ipc::encodeStepRequest(job, 0, accel::ipc::StepEventKind::kStarted, 0)) &&
         send(socket, accel::ipc::encodeTaskRequest(job, 0, pid, *ticks,
                                                    accel::ipc::TaskEventKind::kStarted, 0));
}

// The deadline the agent computed: the start of the steps' run + the limit.
int64_t deadlineOf(const std::string& run_dir, uint32_t job, int64_t limit_sec) {
  std::ifstream f(run_dir + "/state/" + std::to_string(job) + ".json");
  std::stringstream text;
  text << f.rdbuf();
  auto j = json::parse(text.str(), nullptr, false);
  if (!j.is_object() || !j.contains("appliance_runs") || j["appliance_runs"].empty()) return 0;
  return j["appliance_runs"][0][1].get<int64_t>() + limit_sec * 1'000'000'000;
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

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> a{
      {"--rounds", "10"}, {"--limit-seconds", "2"}, {"--lead-seconds", "1"}, {"--kind", "gpu"}};
  for (int i = 1; i + 1 < argc; i += 2) a[argv[i]] = argv[i + 1];
  const bool ipu = a["--kind"] == "ipu";
  if (!a.count("--agentd") || !a.count("--accelctl") || !a.count("--topology") ||
      (ipu && !a.count("--hw-mock")) || (!ipu && a["--kind"] != "gpu")) {
    std::fprintf(
        stderr,
        "usage: limit_bench --agentd P --accelctl P --topology XML [--kind gpu|ipu] [--hw-mock DIR]"
        " [--rounds N] [--limit-seconds S] [--lead-seconds S]\n");
    return 2;
  }
  const int rounds = std::stoi(a["--rounds"]);
  const int64_t limit = std::stoll(a["--limit-seconds"]);
  const int64_t lead = std::stoll(a["--lead-seconds"]);
  // Declared before the harness, so removed after the daemon is gone.
  PrivateFreezer cg;
  std::string error;
  if (!cg.setUp(&error)) {
    std::fprintf(stderr, "limit_bench: %s\n", error.c_str());
    return 1;
  }
  // The agent asks slurmctld to signal a job whose cgroup it cannot find;
  // never a real one (bench/run has a sandbox's SLURM_CONF in its
  // environment).
  ::unsetenv("SLURM_CONF");
  accel::testing::AgentHarness h({a["--agentd"], a["--accelctl"], a["--topology"]});
  if (ipu) {
    // The fake controller keeps its state under the harness's directory.
    const std::string state = h.dir() + "/mock-state";
    ::setenv("ACCEL_HW_MOCK_STATE", state.c_str(), 1);  // inherited by the daemon
    std::ofstream(h.dir() + "/vipu.conf")
        << "ApiHost=127.0.0.1\nApiPort=8090\nIpuofDir=" << h.dir() << "/ipuof\nApiTimeout=5\n";
    h.writeConfig("ApplianceKillGrace=1\nHwMockDir=" + a["--hw-mock"] + "\n");
  } else {
    h.writeConfig("ApplianceKillGrace=1\n");
  }
  if (!h.start()) {
    std::fprintf(stderr, "limit_bench: daemon did not start: %s\n", h.startError().c_str());
    return 1;
  }
  std::vector<double> delays, warn_delays;
  int failures = 0;
  uint32_t next_job = 7000;
  for (int r = 0; r < rounds; ++r) {
    // Read the daemon's STATUS= messages as systemd would: an unread notify
    // socket fills up and then stalls the daemon's accept loop.
    (void)h.waitNotify("\n-never-\n", 50ms);
    std::vector<std::pair<uint32_t, pid_t>> jobs;
    int fds[2];
    if (pipe(fds) != 0) return 1;
    for (int n = 0; n < 4; ++n) {  // the captured topology has four GPUs
      uint32_t id = next_job++;
      auto env = accel::testing::AgentHarness::jobEnv(id, kUid, ipu ? "" : std::to_string(n));
      env["SPANK_ACCEL_APPLIANCE_TIME"] = std::to_string(limit);
      env["SPANK_ACCEL_APPLIANCE_TIME_SOURCE"] = "option";
      env["SPANK_ACCEL_APPLIANCE_SIGNAL"] = std::to_string(SIGUSR1);
      env["SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD"] = std::to_string(lead);
      if (ipu) {
        env["SPANK_ACCEL_IPUS"] = "2";
        env["SPANK_ACCEL_NTASKS"] = "1";
      }
      if (!cg.makeDirs(stepCgroup(id)) || h.ctl({"prolog"}, env).exit_code != 0) {
        ++failures;
        continue;
      }
      pid_t pid = spawnTask(fds[1], cg, id);
      // In its cgroup before the agent hears of it, as slurmstepd does it.
      if (!inCgroup(cg, id, pid)) std::fprintf(stderr, "limit_bench: job %u: no cgroup\n", id);
      if (!startStepAndTask(h.socketPath(), id, pid)) {
        std::fprintf(stderr, "limit_bench: job %u: step or task report refused\n", id);
        ++failures;
      }
      jobs.emplace_back(id, pid);
    }
    close(fds[1]);
    std::map<pid_t, int64_t> arrived, warned;
    while (arrived.size() < jobs.size()) {
      pollfd p{fds[0], POLLIN, 0};
      Note note{};
      // Bounded: a task the agent never signals must not hang the run.
      if (poll(&p, 1, 10'000) <= 0 || read(fds[0], &note, sizeof note) != sizeof note) break;
      auto& seen = note.sig == SIGTERM ? arrived : warned;
      seen.emplace(static_cast<pid_t>(note.pid), note.at_ns);
    }
    close(fds[0]);
    for (auto& [id, pid] : jobs) {
      if (!arrived.count(pid)) {
        std::fprintf(stderr, "limit_bench: job %u: task %d got no SIGTERM within 10 s\n", id, pid);
        kill(pid, SIGKILL);
      }
      waitpid(pid, nullptr, 0);
      int64_t deadline = deadlineOf(h.runDir(), id, limit);
      if (deadline == 0 || !arrived.count(pid) || !warned.count(pid)) {
        ++failures;
      } else {
        delays.push_back(static_cast<double>(arrived[pid] - deadline) / 1000.0);
        warn_delays.push_back(static_cast<double>(warned[pid] - (deadline - lead * 1'000'000'000)) /
                              1000.0);
      }
      if (getenv("LIMIT_BENCH_TRACE") && !delays.empty())
        std::fprintf(stderr, "job %u: %.0f us\n", id, delays.back());
      (void)h.ctl({"epilog"}, accel::testing::AgentHarness::jobEnv(id, kUid));
      if (!cg.remove(stepCgroup(id).substr(0, stepCgroup(id).rfind('/')))) ++failures;
    }
  }
  // The agent's own side: when it sent SIGTERM, from its log.
  std::vector<double> sent;
  std::ifstream log(h.dir() + "/agentd.log");
  for (std::string line; std::getline(log, line);) {
    auto at = line.find(" us after the deadline");
    if (at == std::string::npos) continue;
    auto from = line.rfind(' ', at - 1);
    sent.push_back(std::stod(line.substr(from + 1, at - from - 1)));
  }
  json out{{"kind", a["--kind"]},
           {"limit_seconds", limit},
           {"lead_seconds", lead},
           {"warning_after_due", summary(warn_delays)},
           {"sigterm_after_deadline", summary(delays)},
           {"sigterm_sent_after_deadline", summary(sent)},
           {"failures", failures},
           {"slurm_slack_documented_s", {30, 90}}};
  std::printf("%s\n", out.dump(2).c_str());
  return failures == 0 ? 0 : 1;
}
