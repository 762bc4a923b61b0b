// Prolog latency while one ordinary user floods the agent's public control
// socket, beside the same runs without the flood, in one run of one daemon.
// The flood (tests/daemon/flood.h) is a process as uid 65534 holding up to
// 1000 connections that send nothing and churning others as fast as it can.
// Each round spawns `accelctl prolog` and then `accelctl epilog` for a GPU
// job as slurmd does (root, Slurm's environment) and times each to its exit.
// Three series: no flood; flood; flood with the hooks sent to the public
// socket (accelctl given a config whose AdminSocket does not exist), which
// shows what the per-uid places alone are worth. Output: one JSON object on
// stdout. Not a test: it asserts nothing.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "flood.h"
#include "process_harness.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Args {
  std::string agentd, accelctl, topology, run_parent;
  int pairs = 100;
  int held = 1000;
};

// Spawns argv with exactly `env`, output to /dev/null; microseconds to exit.
double timedRun(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env, int* status) {
  std::vector<std::string> envs;
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  envs.push_back("PATH=/usr/sbin:/usr/bin:/sbin:/bin");
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (auto& s : envs) e.push_back(s.data());
  e.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, getenv("BENCH_STDERR") ? getenv("BENCH_STDERR") : "/dev/null",
                                   O_WRONLY | O_APPEND | O_CREAT, 0600);
  auto t0 = Clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, a[0], &fa, nullptr, a.data(), e.data()) != 0) {
    *status = -1;
    return 0;
  }
  waitpid(pid, status, 0);
  auto t1 = Clock::now();
  posix_spawn_file_actions_destroy(&fa);
  return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

json summary(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))]; };
  return {{"n", v.size()}, {"p50_us", at(0.5)}, {"p99_us", at(0.99)}, {"max_us", v.back()}};
}

std::map<std::string, std::string> jobEnv(uint32_t id) {
  return {{"SLURM_JOB_ID", std::to_string(id)}, {"SLURM_JOB_UID", "4242"}, {"SLURM_JOB_GID", "4242"},
          {"SLURM_JOB_USER", "bench"},          {"SLURMD_NODENAME", "bench"}, {"SLURM_JOB_GPUS", "1"}};
}

json pairs(const Args& a, const std::string& config, uint32_t first_job) {
  std::vector<double> pro, epi;
  int failures = 0;
  for (int i = 0; i < a.pairs; ++i) {
    const auto env = jobEnv(first_job + static_cast<uint32_t>(i));
    int st = 0;
    pro.push_back(timedRun({a.accelctl, "--config", config, "prolog"}, env, &st));
    failures += st != 0;
    epi.push_back(timedRun({a.accelctl, "--config", config, "epilog"}, env, &st));
    failures += st != 0;
  }
  return {{"prolog", summary(pro)}, {"epilog", summary(epi)}, {"failures", failures}};
}

json flooded(const Args& a, const accel::testing::AgentHarness& h, const std::string& config, uint32_t first_job) {
  accel::testing::Flood flood(h.socketPath(), 65534, a.held);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the flood in full swing
  json out = pairs(a, config, first_job);
  const auto c = flood.stop();
  out["flood"] = {{"connections", c.connects},          {"connect_refused", c.connect_failures},
                  {"answered_busy", c.answered_busy},   {"closed_unanswered", c.closed_silently},
                  {"churned", c.churned}};
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--agentd") a.agentd = v;
    else if (k == "--accelctl") a.accelctl = v;
    else if (k == "--topology") a.topology = v;
    else if (k == "--pairs") a.pairs = std::stoi(v);
    else if (k == "--held") a.held = std::stoi(v);
    else if (k == "--run-parent") a.run_parent = v;
    else { std::fprintf(stderr, "socket_flood_bench: unknown argument %s\n", k.c_str()); return 2; }
  }
  if (a.agentd.empty() || a.accelctl.empty() || a.topology.empty() || geteuid() != 0) {
    std::fprintf(stderr, "usage (as root): socket_flood_bench --agentd P --accelctl P --topology XML "
                         "[--pairs N] [--held N] [--run-parent TMPFS]\n");
    return 2;
  }
  accel::testing::AgentHarness h({a.agentd, a.accelctl, a.topology});
  if (!a.run_parent.empty()) h.placeRunDirUnder(a.run_parent);
  if (!h.start()) {
    std::fprintf(stderr, "socket_flood_bench: daemon did not start: %s\n", h.startError().c_str());
    return 1;
  }
  // The same settings, but an AdminSocket that does not exist: accelctl falls
  // back to the public socket, where the flood is.
  const std::string public_only = h.dir() + "/accel-public-only.conf";
  {
    std::ifstream in(h.configPath());
    std::ofstream out(public_only);
    out << in.rdbuf() << "AdminSocket=" << h.dir() << "/no-such-admin.sock\n";
  }
  json out;
  out["pairs"] = a.pairs;
  out["held"] = a.held;
  out["no_flood"] = pairs(a, h.configPath(), 10000);
  out["flood"] = flooded(a, h, h.configPath(), 20000);
  out["flood_public_socket"] = flooded(a, h, public_only, 30000);
  out["no_flood_after"] = pairs(a, h.configPath(), 40000);
  out["daemon_running"] = h.running();
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
