// Prolog latency while a real Prometheus scrapes the agent every second,
// beside an agent that serves no metrics at all, in one run. Two daemons on
// the same topology: "plain" (no MetricsAddress) and "scraped"
// (MetricsAddress on loopback, scraped every 1 s by Debian's prometheus,
// started here with a configuration of its own). Blocks of prolog+epilog
// pairs (a GPU job each, spawned as slurmd spawns the hooks) alternate
// between the two daemons, the order flipped every block, so that whatever
// else the machine does falls on both series alike. Prometheus is asked
// afterwards how many scrapes it made and how many succeeded.
// Output: one JSON object on stdout. Not a test: it asserts nothing.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "hook_timing.h"
#include "process_harness.h"

extern char** environ;

namespace {

using accel::bench::latencySummary;
using accel::bench::slurmJobEnv;
using accel::bench::timedRun;
using nlohmann::json;

struct Args {
  std::string agentd, accelctl, topology, prometheus = "/usr/bin/prometheus", run_parent;
  int blocks = 40;
  int pairs_per_block = 100;
};

// A loopback TCP port free now (the kernel's pick for port 0).
int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  close(fd);
  return ntohs(sa.sin_port);
}

// Output of a shell command (curl against Prometheus' API).
std::string capture(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    pclose(p);
  }
  return out;
}

// The single value of an instant query, or -1.
double promValue(int port, const std::string& query) {
  auto body = capture("curl -fsS --max-time 5 -G http://127.0.0.1:" + std::to_string(port) +
                      "/api/v1/query --data-urlencode 'query=" + query + "' 2>/dev/null");
  auto j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.contains("data") || j["data"]["result"].empty()) return -1;
  return std::stod(j["data"]["result"][0]["value"][1].get<std::string>());
}

pid_t spawnPrometheus(const Args& a, const std::string& dir, int prom_port, int metrics_port) {
  std::ofstream(dir + "/prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      << "scrape_configs:\n  - job_name: accel-agent\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << metrics_port << "']\n";
  std::vector<std::string> argv{a.prometheus, "--config.file=" + dir + "/prometheus.yml",
                                "--storage.tsdb.path=" + dir + "/prometheus",
                                "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)};
  std::vector<char*> av;
  for (auto& s : argv) av.push_back(s.data());
  av.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, (dir + "/prometheus.log").c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = -1;
  if (posix_spawn(&pid, av[0], &fa, nullptr, av.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  const bool args_ok =
      accel::bench::readArgs(argc, argv, "metrics_scrape_bench",
                             {{"--agentd", &a.agentd},
                              {"--accelctl", &a.accelctl},
                              {"--topology", &a.topology},
                              {"--prometheus", &a.prometheus},
                              {"--run-parent", &a.run_parent}},
                             {{"--blocks", &a.blocks}, {"--pairs-per-block", &a.pairs_per_block}});
  if (!args_ok) return 2;
  if (a.agentd.empty() || a.accelctl.empty() || a.topology.empty() || geteuid() != 0) {
    std::fprintf(stderr,
                 "usage (as root): metrics_scrape_bench --agentd P --accelctl P --topology XML "
                 "[--prometheus P] [--blocks N] [--pairs-per-block N] [--run-parent TMPFS]\n");
    return 2;
  }
  const int metrics_port = freePort(), prom_port = freePort();
  if (metrics_port < 0 || prom_port < 0 || metrics_port == prom_port) {
    std::fprintf(stderr, "metrics_scrape_bench: no free loopback ports\n");
    return 1;
  }
  accel::testing::AgentHarness plain({a.agentd, a.accelctl, a.topology});
  accel::testing::AgentHarness scraped({a.agentd, a.accelctl, a.topology});
  if (!a.run_parent.empty()) {
    plain.placeRunDirUnder(a.run_parent);
    scraped.placeRunDirUnder(a.run_parent);
  }
  scraped.writeConfig("MetricsAddress=127.0.0.1:" + std::to_string(metrics_port) + "\n");
  for (auto* h : {&plain, &scraped}) {
    if (!h->start()) {
      std::fprintf(stderr, "metrics_scrape_bench: daemon did not start: %s\n",
                   h->startError().c_str());
      return 1;
    }
  }
  const pid_t prom = spawnPrometheus(a, scraped.dir(), prom_port, metrics_port);
  if (prom < 0) {
    std::fprintf(stderr, "metrics_scrape_bench: could not start %s\n", a.prometheus.c_str());
    return 1;
  }
  // Runs once Prometheus has scraped the agent successfully.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (promValue(prom_port, "up{job=\"accel-agent\"}") != 1) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(
          stderr,
          "metrics_scrape_bench: Prometheus did not scrape the agent within 30 s (see %s)\n",
          (scraped.dir() + "/prometheus.log").c_str());
      kill(prom, SIGTERM);
      waitpid(prom, nullptr, 0);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const double scrapes_before =
      promValue(prom_port, "count_over_time(up{job=\"accel-agent\"}[1h])");

  std::vector<double> pro[2], epi[2];  // 0: plain, 1: scraped
  int failures[2] = {0, 0};
  uint32_t job = 10000;
  const auto t0 = std::chrono::steady_clock::now();
  for (int b = 0; b < a.blocks; ++b) {
    for (int turn = 0; turn < 2; ++turn) {
      const int which = (b + turn) % 2;
      auto& h = which == 0 ? plain : scraped;
      for (int i = 0; i < a.pairs_per_block; ++i, ++job) {
        const auto env = slurmJobEnv(job, "1");
        int st = 0;
        pro[which].push_back(
            timedRun({a.accelctl, "--config", h.configPath(), "prolog"}, env, &st));
        failures[which] += st != 0;
        epi[which].push_back(
            timedRun({a.accelctl, "--config", h.configPath(), "epilog"}, env, &st));
        failures[which] += st != 0;
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the last scrape is stored
  const double scrapes =
      promValue(prom_port, "count_over_time(up{job=\"accel-agent\"}[1h])") - scrapes_before;
  const double scrapes_ok = promValue(prom_port, "sum_over_time(up{job=\"accel-agent\"}[1h])");
  const double scrapes_all = promValue(prom_port, "count_over_time(up{job=\"accel-agent\"}[1h])");
  const double scrape_s =
      promValue(prom_port, "avg_over_time(scrape_duration_seconds{job=\"accel-agent\"}[1h])");
  const double samples = promValue(prom_port, "scrape_samples_scraped{job=\"accel-agent\"}");
  kill(prom, SIGTERM);
  waitpid(prom, nullptr, 0);

  json out;
  out["pairs_per_series"] = a.blocks * a.pairs_per_block;
  out["seconds"] = seconds;
  out["plain"] = {{"prolog", latencySummary(pro[0])},
                  {"epilog", latencySummary(epi[0])},
                  {"failures", failures[0]}};
  out["scraped"] = {{"prolog", latencySummary(pro[1])},
                    {"epilog", latencySummary(epi[1])},
                    {"failures", failures[1]}};
  out["scrapes_during_runs"] = scrapes;
  out["scrapes_all"] = scrapes_all;
  out["scrapes_ok"] = scrapes_ok;
  out["scrape_seconds_avg"] = scrape_s;
  out["samples_per_scrape"] = samples;
  out["daemons_running"] = plain.running() && scraped.running();
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
