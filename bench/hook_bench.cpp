// Prolog/epilog latency as slurmd sees it: whole processes, spawned and
// waited for. Runs accel-agentd on a captured topology, then times
//   - accelctl prolog and accelctl epilog, one job at a time;
//   - 8 prologs at once (slurmd runs different jobs' prologs concurrently);
//   - a naive shell prolog/epilog (lstopo + job file) as the baseline;
//   - `accelctl --help`, spawned the same way: the process start-up and exit
//     that every hook pays before and after its request (the floor);
// and reports the daemon's resident memory and its CPU use while idle.
// With --run-parent DIR (a tmpfs, as /run is on a systemd host) the daemon's
// RunDir (job records and job directories) and the baseline's job files live
// there, as deployed; the same hook runs are then repeated with RunDir on the
// disk, beside the spool, and reported as "agent_rundir_on_disk".
// With --nvml LIB (the fake NVML, <build>/hw_mock/lib/libnvidia-ml.so.1) GPU
// jobs (SLURM_JOB_GPUS=0) are timed against two daemons in the same run, one
// without telemetry (no NVML) and one sampling the topology's GPUs through
// LIB (scripted busy, TelemetryInterval 1 s), in alternating blocks; then the
// second holds every GPU for --idle-seconds and its sampling thread's CPU is
// reported per sample and per GPU ("telemetry").
// Output: one JSON object on stdout. Not a test: it asserts nothing.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "hook_timing.h"
#include "process_harness.h"

namespace {

using accel::bench::latencySummary;
using accel::bench::slurmJobEnv;
using accel::bench::timedRun;
using nlohmann::json;

struct Args {
  std::string agentd, accelctl, topology, baseline_dir, hw_mock, run_parent, nvml;
  int iterations = 500;
  int baseline_iterations = 50;
  int idle_seconds = 10;
};

long rssKb(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

double cpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), {});
  auto close = s.rfind(')');
  std::vector<std::string> fields;
  size_t pos = close + 2;
  while (pos < s.size()) {
    auto next = s.find(' ', pos);
    fields.push_back(s.substr(pos, next - pos));
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  // utime and stime are fields 14 and 15 (1-based); fields[] starts at field 3.
  return (std::stod(fields[11]) + std::stod(fields[12])) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

json hookRuns(accel::testing::AgentHarness& h, const Args& a) {
  std::vector<double> pro, epi;
  std::vector<std::string> pro_argv{a.accelctl, "--config", h.configPath(), "prolog"};
  std::vector<std::string> epi_argv{a.accelctl, "--config", h.configPath(), "epilog"};
  std::atomic<int> failures{0};
  for (int i = 0; i < a.iterations; ++i) {
    int st = 0;
    pro.push_back(timedRun(pro_argv, slurmJobEnv(10000 + i), &st));
    failures += st != 0;
    epi.push_back(timedRun(epi_argv, slurmJobEnv(10000 + i), &st));
    failures += st != 0;
  }
  std::vector<double> concurrent;
  for (int round = 0; round < a.iterations / 8; ++round) {
    std::vector<std::thread> ts;
    std::vector<double> lat(8);
    for (int k = 0; k < 8; ++k)
      ts.emplace_back([&, k] {
        int st = 0;
        lat[k] = timedRun(pro_argv, slurmJobEnv(50000 + round * 8 + k), &st);
        failures += st != 0;
      });
    for (auto& t : ts) t.join();
    concurrent.insert(concurrent.end(), lat.begin(), lat.end());
    for (int k = 0; k < 8; ++k) {
      int st = 0;
      timedRun(epi_argv, slurmJobEnv(50000 + round * 8 + k), &st);
    }
  }
  // The same spawn with no request: what is left of a hook once the daemon
  // answered in no time.
  std::vector<double> startup;
  for (int i = 0; i < a.iterations; ++i) {
    int st = 0;
    startup.push_back(timedRun({a.accelctl, "--help"}, slurmJobEnv(90000 + i), &st));
    failures += st != 0;
  }
  return {{"prolog", latencySummary(pro)},
          {"epilog", latencySummary(epi)},
          {"prolog_8_concurrent", latencySummary(concurrent)},
          {"accelctl_startup", latencySummary(startup)},
          {"failures", failures.load()}};
}

// IPU jobs (--ipus=2, 2 tasks) against the fake V-IPU client: the prolog
// makes a partition and writes two IPUoF files, the epilog removes them.
json ipuRuns(const Args& a) {
  accel::testing::AgentHarness h({a.agentd, a.accelctl, a.topology});
  std::string state = h.dir() + "/mock-state";
  setenv("ACCEL_HW_MOCK_STATE", state.c_str(), 1);
  std::ofstream(h.dir() + "/vipu.conf") << "ApiHost=127.0.0.1\nIpuofDir=" << h.dir() << "/ipuof\n";
  h.writeConfig("HwMockDir=" + a.hw_mock + "\n");
  if (!h.start()) return {{"error", h.startError()}};
  std::vector<std::string> pro_argv{a.accelctl, "--config", h.configPath(), "prolog"};
  std::vector<std::string> epi_argv{a.accelctl, "--config", h.configPath(), "epilog"};
  std::vector<double> pro, epi;
  int failures = 0;
  for (int i = 0; i < std::max(10, a.iterations / 5); ++i) {
    auto env = slurmJobEnv(30000 + i);
    env["SPANK_ACCEL_IPUS"] = "2";
    env["SPANK_ACCEL_NTASKS"] = "2";
    int st = 0;
    pro.push_back(timedRun(pro_argv, env, &st));
    failures += st != 0;
    epi.push_back(timedRun(epi_argv, env, &st));
    failures += st != 0;
  }
  unsetenv("ACCEL_HW_MOCK_STATE");
  return {{"prolog", latencySummary(pro)}, {"epilog", latencySummary(epi)}, {"failures", failures}};
}

json baselineRuns(const Args& a) {
  std::vector<double> pro, epi;
  int failures = 0;
  for (int i = 0; i < a.baseline_iterations; ++i) {
    auto env = slurmJobEnv(20000 + i);
    env["BASELINE_ROOT"] = a.baseline_dir;
    int st = 0;
    pro.push_back(timedRun({"/bin/sh", BENCH_DIR "/baseline_prolog.sh"}, env, &st));
    failures += st != 0;
    epi.push_back(timedRun({"/bin/sh", BENCH_DIR "/baseline_epilog.sh"}, env, &st));
    failures += st != 0;
  }
  return {{"prolog", latencySummary(pro)}, {"epilog", latencySummary(epi)}, {"failures", failures}};
}

// The output of a command (popen), empty on failure.
std::string commandOutput(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// Fake NVML scripts in `dir`, one per GPU of the topology (its bus id), busy for ever.
int writeNvmlScripts(const Args& a, const std::string& dir) {
  std::filesystem::create_directories(dir);
  json topo =
      json::parse(commandOutput(a.agentd + " --print-topology --xml '" + a.topology + "' --json"),
                  nullptr, false);
  int n = 0;
  if (topo.is_discarded()) return 0;
  for (const auto& acc : topo.value("accelerators", json::array())) {
    if (acc.value("kind", "") != "gpu") continue;
    std::ofstream(dir + "/gpu" + std::to_string(n))
        << "uuid GPU-00000000-0000-0000-0000-00000000000" << n << "\n"
        << "bus_id " << acc.value("pci_bus_id", "") << "\nmemory_total 85899345920\n"
        << "energy_start 1000000\nsample_seconds 1\n"
        << "phase busy util=60 memory_util=16 used=23141941248 power=189160\n";
    ++n;
  }
  return n;
}

json telemetryOf(accel::testing::AgentHarness& h, const Args& a) {
  json st =
      json::parse(commandOutput(a.accelctl + " --config '" + h.configPath() + "' --json status"),
                  nullptr, false);
  return st.is_discarded() ? json() : st.value("telemetry", json());
}

// GPU prologs and epilogs without telemetry and with it, in alternating
// blocks of 50 so that the machine's load falls on both alike.
json telemetryRuns(const Args& a) {
  accel::testing::AgentHarness off({a.agentd, a.accelctl, a.topology});
  accel::testing::AgentHarness on({a.agentd, a.accelctl, a.topology});
  const std::string scripts = on.dir() + "/nvml";
  const int gpus = writeNvmlScripts(a, scripts);
  setenv("ACCEL_FAKE_NVML_DIR", scripts.c_str(), 1);
  off.writeConfig("NvmlLibrary=" + off.dir() + "/no-such-libnvidia-ml.so.1\n");
  on.writeConfig("NvmlLibrary=" + a.nvml + "\nTelemetryInterval=1\n");
  if (!off.start() || !on.start()) return {{"error", off.startError() + on.startError()}};
  std::map<std::string, std::vector<double>> lat;
  int failures = 0;
  uint32_t job = 60000;
  for (int block = 0; block < std::max(2, a.iterations / 50); ++block) {
    for (auto* h : {&off, &on}) {
      const std::string key = h == &off ? "off" : "on";
      std::vector<std::string> pro{a.accelctl, "--config", h->configPath(), "prolog"};
      std::vector<std::string> epi{a.accelctl, "--config", h->configPath(), "epilog"};
      for (int i = 0; i < 25; ++i, ++job) {
        int st = 0;
        lat[key + "_prolog"].push_back(timedRun(pro, slurmJobEnv(job, "0"), &st));
        failures += st != 0;
        lat[key + "_epilog"].push_back(timedRun(epi, slurmJobEnv(job, "0"), &st));
        failures += st != 0;
      }
    }
  }
  json out = {{"gpus", gpus}, {"failures", failures}};
  for (const auto& [k, v] : lat) out[k] = latencySummary(v);
  // Every GPU held by one job for the idle window: the sampling thread's cost.
  std::string all;
  for (int g = 0; g < gpus; ++g) all += (g ? "," : "") + std::to_string(g);
  int st = 0;
  timedRun({a.accelctl, "--config", on.configPath(), "prolog"}, slurmJobEnv(99999, all), &st);
  json t0 = telemetryOf(on, a);
  std::this_thread::sleep_for(std::chrono::seconds(a.idle_seconds));
  json t1 = telemetryOf(on, a);
  timedRun({a.accelctl, "--config", on.configPath(), "epilog"}, slurmJobEnv(99999, all), &st);
  unsetenv("ACCEL_FAKE_NVML_DIR");
  if (t0.is_null() || t1.is_null()) return out;
  const double samples = t1.value("samples", 0.0) - t0.value("samples", 0.0);
  const double cpu_ns = t1.value("cpu_ns", 0.0) - t0.value("cpu_ns", 0.0);
  out["held_window_seconds"] = a.idle_seconds;
  out["held_samples"] = samples;
  out["sampler_cpu_us_per_sample"] = samples > 0 ? cpu_ns / samples / 1e3 : 0;
  out["sampler_cpu_us_per_gpu_sample"] =
      samples > 0 && gpus > 0 ? cpu_ns / samples / gpus / 1e3 : 0;
  out["sampler_cpu_pct_of_core_1s"] = cpu_ns / (a.idle_seconds * 1e9) * 100;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  const bool args_ok = accel::bench::readArgs(argc, argv, "hook_bench",
                                              {{"--agentd", &a.agentd},
                                               {"--accelctl", &a.accelctl},
                                               {"--topology", &a.topology},
                                               {"--hw-mock", &a.hw_mock},
                                               {"--run-parent", &a.run_parent},
                                               {"--nvml", &a.nvml}},
                                              {{"--iterations", &a.iterations},
                                               {"--baseline-iterations", &a.baseline_iterations},
                                               {"--idle-seconds", &a.idle_seconds}});
  if (!args_ok) return 2;
  if (a.agentd.empty() || a.accelctl.empty() || a.topology.empty()) {
    std::fprintf(stderr,
                 "usage: hook_bench --agentd P --accelctl P --topology XML [--iterations N]\n");
    return 2;
  }
  accel::testing::AgentHarness h({a.agentd, a.accelctl, a.topology});
  if (!a.run_parent.empty()) h.placeRunDirUnder(a.run_parent);
  a.baseline_dir = (a.run_parent.empty() ? h.dir() : a.run_parent) + "/accel-bench-baseline-" +
                   std::to_string(getpid());
  mkdir(a.baseline_dir.c_str(), 0755);
  mkdir((a.baseline_dir + "/jobs").c_str(), 0755);
  if (!h.start()) {
    std::fprintf(stderr, "hook_bench: daemon did not start: %s\n", h.startError().c_str());
    return 1;
  }
  json out;
  out["run_dir"] = h.runDir();
  out["agent"] = hookRuns(h, a);
  out["baseline"] = baselineRuns(a);
  std::filesystem::remove_all(a.baseline_dir);
  if (!a.run_parent.empty()) {
    accel::testing::AgentHarness disk({a.agentd, a.accelctl, a.topology});
    if (!disk.start()) {
      out["agent_rundir_on_disk"] = {{"error", disk.startError()}};
    } else {
      out["agent_rundir_on_disk"] = hookRuns(disk, a);
      out["agent_rundir_on_disk"]["run_dir"] = disk.runDir();
    }
  }
  if (!a.hw_mock.empty()) out["ipu"] = ipuRuns(a);
  if (!a.nvml.empty()) out["telemetry"] = telemetryRuns(a);
  out["daemon_rss_kb"] = rssKb(h.pid());
  double c0 = cpuSeconds(h.pid());
  std::this_thread::sleep_for(std::chrono::seconds(a.idle_seconds));
  double c1 = cpuSeconds(h.pid());
  out["idle_cpu_seconds"] = c1 - c0;
  out["idle_window_seconds"] = a.idle_seconds;
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
