// Prolog latency while a real Prometheus scrapes the agent every second,
// beside an agent that serves no metrics at all, in one run. Two daemons on
// the same topology: "plain" (no MetricsAddress) and "scraped"
// (MetricsAddress on loopback, scraped every 1 s by Debian's prometheus,
// started here with a configuration of its own). Blocks of prolog+epilog
// pairs (a GPU job each, spawned as slurmd spawns the hooks) alternate
// between the two daemons, the order flipped every block, so that whatever
// else the machine does falls on both series alike. Prometheus is asked
// afterwards how many scrapes it made and how many succeeded.
// With --slow-clients N, a third agent, "held", is scraped too while N slow
// clients hold its endpoint for the whole run (a user's slowloris: each
// connection from a loopback address of its own, one header byte every 2 s,
// never finishing, replaced as soon as the endpoint ends it; a process of
// their own as uid 65534, as a user's would be); its blocks
// join the rotation, so the three series share whatever else the machine does.
// Output: one JSON object on stdout. Not a test: it asserts nothing.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
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
  int slow_clients = 0;
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

// Slow clients on 127.0.0.1:port until `stop`: `n` connections, each from
// the next of 127.0.0.2 .. 127.0.0.254, that start a GET, add one header
// byte every 2 s and never end it. One the endpoint ends is replaced at once.
// They run in a child process as `uid` (a user's, not the root that runs
// Prometheus here), which ends on SIGTERM and reports its counts on a pipe.
volatile sig_atomic_t slow_stop = 0;

struct SlowClients {
  long opened = 0, ended = 0;  // set by join()

  bool run(int port, int n, uid_t uid) {
    int counts[2];
    if (pipe(counts) != 0) return false;
    child_ = fork();
    if (child_ < 0) return false;
    if (child_ == 0) {
      close(counts[0]);
      signal(SIGTERM, [](int) { slow_stop = 1; });
      if (setgid(uid) != 0 || setuid(uid) != 0) _exit(3);
      hold(port, n);
      const long out[2] = {opened, ended};
      (void)!write(counts[1], out, sizeof out);
      _exit(0);
    }
    close(counts[1]);
    counts_ = counts[0];
    return true;
  }
  void join() {
    if (child_ <= 0) return;
    kill(child_, SIGTERM);
    long in[2] = {0, 0};
    if (read(counts_, in, sizeof in) == ssize_t(sizeof in)) opened = in[0], ended = in[1];
    close(counts_);
    waitpid(child_, nullptr, 0);
    child_ = -1;
  }

 private:
  pid_t child_ = -1;
  int counts_ = -1;

  int openOne(int port, int source) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in from{}, to{};
    from.sin_family = to.sin_family = AF_INET;
    from.sin_addr.s_addr = htonl(0x7f000000u | uint32_t(source));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(uint16_t(port));
    static const char kStart[] = "GET /metrics HTTP/1.1\r\nHost: bench\r\nX-Slow: ";
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
        connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 ||
        send(fd, kStart, sizeof kStart - 1, MSG_NOSIGNAL) < 0) {
      if (fd >= 0) close(fd);
      return -1;
    }
    ++opened;
    return fd;
  }
  void hold(int port, int n) {
    std::vector<pollfd> fds;
    int source = 1;
    auto trickle = std::chrono::steady_clock::now();
    while (!slow_stop) {
      while (int(fds.size()) < n && !slow_stop) {
        source = source % 253 + 1;
        int fd = openOne(port, source);
        if (fd < 0) break;
        fds.push_back({fd, POLLIN, 0});
      }
      poll(fds.data(), fds.size(), 100);
      for (size_t i = 0; i < fds.size();) {
        if (fds[i].revents) {
          close(fds[i].fd);
          ++ended;
          fds[i] = fds.back();
          fds.pop_back();
        } else {
          ++i;
        }
      }
      if (std::chrono::steady_clock::now() >= trickle) {
        trickle += std::chrono::seconds(2);
        for (auto& p : fds) (void)send(p.fd, "a", 1, MSG_NOSIGNAL);
      }
    }
    for (auto& p : fds) close(p.fd);
  }
};

pid_t spawnPrometheus(const Args& a, const std::string& dir, int prom_port, int metrics_port,
                      int held_port) {
  std::ofstream conf(dir + "/prometheus.yml");
  conf << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
       << "scrape_configs:\n  - job_name: accel-agent\n    static_configs:\n"
       << "      - targets: ['127.0.0.1:" << metrics_port << "']\n";
  if (held_port > 0)
    conf << "  - job_name: accel-agent-held\n    static_configs:\n"
         << "      - targets: ['127.0.0.1:" << held_port << "']\n";
  conf.close();
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
  const bool args_ok = accel::bench::readArgs(argc, argv, "metrics_scrape_bench",
                                              {{"--agentd", &a.agentd},
                                               {"--accelctl", &a.accelctl},
                                               {"--topology", &a.topology},
                                               {"--prometheus", &a.prometheus},
                                               {"--run-parent", &a.run_parent}},
                                              {{"--blocks", &a.blocks},
                                               {"--pairs-per-block", &a.pairs_per_block},
                                               {"--slow-clients", &a.slow_clients}});
  if (!args_ok) return 2;
  if (a.agentd.empty() || a.accelctl.empty() || a.topology.empty() || geteuid() != 0) {
    std::fprintf(stderr,
                 "usage (as root): metrics_scrape_bench --agentd P --accelctl P --topology XML "
                 "[--prometheus P] [--blocks N] [--pairs-per-block N] [--slow-clients N] "
                 "[--run-parent TMPFS]\n");
    return 2;
  }
  const bool held_mode = a.slow_clients > 0;
  const int metrics_port = freePort(), prom_port = freePort();
  const int held_port = held_mode ? freePort() : 0;
  if (metrics_port < 0 || prom_port < 0 || held_port < 0 || metrics_port == prom_port ||
      (held_mode && (held_port == metrics_port || held_port == prom_port))) {
    std::fprintf(stderr, "metrics_scrape_bench: no free loopback ports\n");
    return 1;
  }
  accel::testing::AgentHarness plain({a.agentd, a.accelctl, a.topology});
  accel::testing::AgentHarness scraped({a.agentd, a.accelctl, a.topology});
  accel::testing::AgentHarness held({a.agentd, a.accelctl, a.topology});
  std::vector<accel::testing::AgentHarness*> agents{&plain, &scraped};
  if (held_mode) agents.push_back(&held);
  if (!a.run_parent.empty())
    for (auto* h : agents) h->placeRunDirUnder(a.run_parent);
  scraped.writeConfig("MetricsAddress=127.0.0.1:" + std::to_string(metrics_port) + "\n");
  if (held_mode) held.writeConfig("MetricsAddress=127.0.0.1:" + std::to_string(held_port) + "\n");
  for (auto* h : agents) {
    if (!h->start()) {
      std::fprintf(stderr, "metrics_scrape_bench: daemon did not start: %s\n",
                   h->startError().c_str());
      return 1;
    }
  }
  const pid_t prom = spawnPrometheus(a, scraped.dir(), prom_port, metrics_port, held_port);
  if (prom < 0) {
    std::fprintf(stderr, "metrics_scrape_bench: could not start %s\n", a.prometheus.c_str());
    return 1;
  }
  // Runs once Prometheus has scraped the agent successfully.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto allUp = [&] {
    return promValue(prom_port, "up{job=\"accel-agent\"}") == 1 &&
           (!held_mode || promValue(prom_port, "up{job=\"accel-agent-held\"}") == 1);
  };
  while (!allUp()) {
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
  SlowClients slow;
  if (held_mode) {
    if (!slow.run(held_port, a.slow_clients, 65534)) {
      std::fprintf(stderr, "metrics_scrape_bench: cannot start the slow clients\n");
      kill(prom, SIGTERM);
      waitpid(prom, nullptr, 0);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));  // they hold it before the first block
  }

  const int series = int(agents.size());
  std::vector<double> pro[3], epi[3];  // 0: plain, 1: scraped, 2: held
  int failures[3] = {0, 0, 0};
  uint32_t job = 10000;
  const auto t0 = std::chrono::steady_clock::now();
  for (int b = 0; b < a.blocks; ++b) {
    for (int turn = 0; turn < series; ++turn) {
      const int which = (b + turn) % series;
      auto& h = *agents[size_t(which)];
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
  slow.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the last scrape is stored
  const double scrapes =
      promValue(prom_port, "count_over_time(up{job=\"accel-agent\"}[1h])") - scrapes_before;
  const double scrapes_ok = promValue(prom_port, "sum_over_time(up{job=\"accel-agent\"}[1h])");
  const double scrapes_all = promValue(prom_port, "count_over_time(up{job=\"accel-agent\"}[1h])");
  const double scrape_s =
      promValue(prom_port, "avg_over_time(scrape_duration_seconds{job=\"accel-agent\"}[1h])");
  const double samples = promValue(prom_port, "scrape_samples_scraped{job=\"accel-agent\"}");
  const double held_scrapes =
      promValue(prom_port, "count_over_time(up{job=\"accel-agent-held\"}[1h])");
  const double held_ok = promValue(prom_port, "sum_over_time(up{job=\"accel-agent-held\"}[1h])");
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
  if (held_mode) {
    out["held"] = {{"prolog", latencySummary(pro[2])},
                   {"epilog", latencySummary(epi[2])},
                   {"failures", failures[2]},
                   {"slow_clients", a.slow_clients},
                   {"slow_connections_opened", slow.opened},
                   {"slow_connections_ended_by_agent", slow.ended},
                   {"scrapes_all", held_scrapes},
                   {"scrapes_ok", held_ok}};
  }
  bool running = true;
  for (auto* h : agents) running = running && h->running();
  out["daemons_running"] = running;
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
