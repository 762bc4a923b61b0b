#pragma once
// What the hook benchmarks share: running a hook as slurmd does (a whole
// process, spawned with Slurm's environment and waited for) and timing it,
// and the summary of a series of such timings.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace accel::bench {

// Spawns argv with exactly `env` plus a system PATH, stdout to /dev/null and
// stderr to the file named by BENCH_STDERR when set (to see why runs fail),
// else /dev/null. Sets *status to the wait status (-1: could not spawn);
// returns microseconds from spawn to exit.
inline double timedRun(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env, int* status) {
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
  const char* err = std::getenv("BENCH_STDERR");
  posix_spawn_file_actions_addopen(&fa, 2, err ? err : "/dev/null", O_WRONLY | O_APPEND | O_CREAT,
                                   0600);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, a[0], &fa, nullptr, a.data(), e.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    *status = -1;
    return 0;
  }
  waitpid(pid, status, 0);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

// n, p50, p99 and max of `v` (microseconds).
inline nlohmann::json latencySummary(std::vector<double> v) {
  if (v.empty()) return {{"n", 0}};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * double(v.size() - 1) + 0.5))];
  };
  return {{"n", v.size()}, {"p50_us", at(0.5)}, {"p99_us", at(0.99)}, {"max_us", v.back()}};
}

// The prolog/epilog environment slurmd gives a job of user 4242 on node
// "bench"; `gpus` non-empty adds SLURM_JOB_GPUS.
inline std::map<std::string, std::string> slurmJobEnv(uint32_t id, const std::string& gpus = "") {
  std::map<std::string, std::string> env{{"SLURM_JOB_ID", std::to_string(id)},
                                         {"SLURM_JOB_UID", "4242"},
                                         {"SLURM_JOB_GID", "4242"},
                                         {"SLURM_JOB_USER", "bench"},
                                         {"SLURMD_NODENAME", "bench"}};
  if (!gpus.empty()) env["SLURM_JOB_GPUS"] = gpus;
  return env;
}

// The hook benchmarks' command lines: "--name value" pairs, each name either
// a text field (`texts`) or a number (`numbers`). False, after a message
// naming `prog`, on a name in neither; a last name without a value is ignored.
inline bool readArgs(int argc, char** argv, const char* prog,
                     const std::map<std::string, std::string*>& texts,
                     const std::map<std::string, int*>& numbers) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (auto t = texts.find(k); t != texts.end()) {
      *t->second = v;
    } else if (auto n = numbers.find(k); n != numbers.end()) {
      *n->second = std::stoi(v);
    } else {
      std::fprintf(stderr, "%s: unknown argument %s\n", prog, k.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace accel::bench
