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
#include "hook_timing.h"
#include "process_harness.h"

namespace {

using accel::bench::latencySummary;
using accel::bench::slurmJobEnv;
using accel::bench::timedRun;
using nlohmann::json;

struct Args {
  std::string agentd, accelctl, topology, run_parent;
  int pairs = 100;
  int held = 1000;
};

json pairs(const Args& a, const std::string& config, uint32_t first_job) {
  std::vector<double> pro, epi;
  int failures = 0;
  for (int i = 0; i < a.pairs; ++i) {
    const auto env = slurmJobEnv(first_job + static_cast<uint32_t>(i), "1");
    int st = 0;
    pro.push_back(timedRun({a.accelctl, "--config", config, "prolog"}, env, &st));
    failures += st != 0;
    epi.push_back(timedRun({a.accelctl, "--config", config, "epilog"}, env, &st));
    failures += st != 0;
  }
  return {{"prolog", latencySummary(pro)}, {"epilog", latencySummary(epi)}, {"failures", failures}};
}

json flooded(const Args& a, const accel::testing::AgentHarness& h, const std::string& config,
             uint32_t first_job) {
  accel::testing::Flood flood(h.socketPath(), 65534, a.held);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the flood in full swing
  json out = pairs(a, config, first_job);
  const auto c = flood.stop();
  out["flood"] = {{"connections", c.connects},
                  {"connect_refused", c.connect_failures},
                  {"answered_busy", c.answered_busy},
                  {"closed_unanswered", c.closed_silently},
                  {"churned", c.churned}};
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  const bool args_ok = accel::bench::readArgs(argc, argv, "socket_flood_bench",
                                              {{"--agentd", &a.agentd},
                                               {"--accelctl", &a.accelctl},
                                               {"--topology", &a.topology},
                                               {"--run-parent", &a.run_parent}},
                                              {{"--pairs", &a.pairs}, {"--held", &a.held}});
  if (!args_ok) return 2;
  if (a.agentd.empty() || a.accelctl.empty() || a.topology.empty() || geteuid() != 0) {
    std::fprintf(stderr,
                 "usage (as root): socket_flood_bench --agentd P --accelctl P --topology XML "
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
