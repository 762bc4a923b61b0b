// How late the appliance limit's SIGTERM reaches a task, against the
// deadline the agent itself computed (start of the job's step + limit, read
// from the job record). Runs accel-agentd on a captured topology; each round
// runs one GPU job per GPU at once, each with one task: a child of this
// program that notes CLOCK_REALTIME in its SIGTERM handler.
// Output: one JSON object on stdout. Not a test: it asserts nothing.
// For comparison: slurmctld checks time limits every 30 s and waits KillWait
// (30 s by default) before SIGKILL, so Slurm's own slack is 30-90 s.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "accel/ipc/control_socket.h"
#include "accel/schemas/control_generated.h"
#include "accel/spank/proc_stat.h"
#include "process_harness.h"

namespace {

using nlohmann::json;
using namespace std::chrono_literals;

int64_t realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// The task: writes its pid and the time SIGTERM arrived to `fd`, then exits.
pid_t spawnTask(int fd) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  static int out;
  out = fd;
  struct sigaction sa {};
  sa.sa_handler = [](int) {
    int64_t note[2] = {getpid(), realtimeNs()};
    (void)!write(out, note, sizeof note);
    _exit(0);
  };
  sigaction(SIGTERM, &sa, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (;;) pause();
}

bool send(const std::string& socket, flatbuffers::FlatBufferBuilder& fbb) {
  auto reply = accel::ipc::call(socket, fbb.GetBufferPointer(), fbb.GetSize(), 2s);
  return reply.ok() && flatbuffers::GetRoot<accel::control::Reply>(reply->data())->outcome() == accel::control::Outcome::Ok;
}

bool startStepAndTask(const std::string& socket, uint32_t job, pid_t pid) {
  namespace fb = accel::control;
  auto ticks = accel::spank::readStartTicks(pid);
  if (!ticks.ok()) return false;
  flatbuffers::FlatBufferBuilder step;
  step.Finish(fb::CreateRequest(step, 1, fb::RequestBody::StepRequest,
                                fb::CreateStepRequest(step, job, 0, fb::StepEventKind::Started, 0).Union()),
              fb::RequestIdentifier());
  flatbuffers::FlatBufferBuilder task;
  task.Finish(fb::CreateRequest(task, 1, fb::RequestBody::TaskRequest,
                                fb::CreateTaskRequest(task, job, 0, pid, *ticks, fb::TaskEventKind::Started, 0).Union()),
              fb::RequestIdentifier());
  return send(socket, step) && send(socket, task);
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
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))]; };
  return {{"n", v.size()}, {"p50_us", at(0.5)}, {"p99_us", at(0.99)}, {"max_us", v.back()}, {"min_us", v.front()}};
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> a{{"--rounds", "10"}, {"--limit-seconds", "1"}};
  for (int i = 1; i + 1 < argc; i += 2) a[argv[i]] = argv[i + 1];
  if (!a.count("--agentd") || !a.count("--accelctl") || !a.count("--topology")) {
    std::fprintf(stderr, "usage: limit_bench --agentd P --accelctl P --topology XML [--rounds N] [--limit-seconds S]\n");
    return 2;
  }
  const int rounds = std::stoi(a["--rounds"]);
  const int64_t limit = std::stoll(a["--limit-seconds"]);
  accel::testing::AgentHarness h({a["--agentd"], a["--accelctl"], a["--topology"]});
  h.writeConfig("ApplianceKillGrace=1\n");
  if (!h.start()) { std::fprintf(stderr, "limit_bench: daemon did not start: %s\n", h.startError().c_str()); return 1; }
  std::vector<double> delays;
  int failures = 0;
  uint32_t next_job = 7000;
  for (int r = 0; r < rounds; ++r) {
    // Read the daemon's STATUS= messages as systemd would: an unread notify
    // socket fills up and then stalls the daemon's accept loop.
    (void)h.waitNotify("\n-never-\n", 50ms);
    std::vector<std::pair<uint32_t, pid_t>> jobs;
    int fds[2];
    if (pipe(fds) != 0) return 1;
    for (int gpu = 0; gpu < 4; ++gpu) {  // the captured topology has four GPUs
      uint32_t id = next_job++;
      auto env = accel::testing::AgentHarness::jobEnv(id, 4242, std::to_string(gpu));
      env["SPANK_ACCEL_APPLIANCE_TIME"] = std::to_string(limit);
      if (h.ctl({"prolog"}, env).exit_code != 0) { ++failures; continue; }
      pid_t pid = spawnTask(fds[1]);
      if (!startStepAndTask(h.socketPath(), id, pid)) {
        std::fprintf(stderr, "limit_bench: job %u: step or task report refused\n", id);
        ++failures;
      }
      jobs.emplace_back(id, pid);
    }
    close(fds[1]);
    std::map<pid_t, int64_t> arrived;
    for (size_t i = 0; i < jobs.size(); ++i) {
      pollfd p{fds[0], POLLIN, 0};
      int64_t note[2];
      // Bounded: a task the agent never signals must not hang the run.
      if (poll(&p, 1, 10'000) <= 0 || read(fds[0], note, sizeof note) != sizeof note) break;
      arrived[static_cast<pid_t>(note[0])] = note[1];
    }
    close(fds[0]);
    for (auto& [id, pid] : jobs) {
      if (!arrived.count(pid)) {
        std::fprintf(stderr, "limit_bench: job %u: task %d got no SIGTERM within 10 s\n", id, pid);
        kill(pid, SIGKILL);
      }
      waitpid(pid, nullptr, 0);
      int64_t deadline = deadlineOf(h.runDir(), id, limit);
      if (deadline == 0 || !arrived.count(pid)) ++failures;
      else delays.push_back(static_cast<double>(arrived[pid] - deadline) / 1000.0);
      if (getenv("LIMIT_BENCH_TRACE") && !delays.empty()) std::fprintf(stderr, "job %u: %.0f us\n", id, delays.back());
      (void)h.ctl({"epilog"}, accel::testing::AgentHarness::jobEnv(id, 4242));
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
  json out{{"limit_seconds", limit}, {"sigterm_after_deadline", summary(delays)},
           {"sigterm_sent_after_deadline", summary(sent)}, {"failures", failures},
           {"slurm_slack_documented_s", {30, 90}}};
  std::printf("%s\n", out.dump(2).c_str());
  return failures == 0 ? 0 : 1;
}
