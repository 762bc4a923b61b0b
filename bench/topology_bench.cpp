// Topology load time through the agent's one loading point, live and from
// each captured XML file, beside the naive way a shell prolog would get the
// same facts (an `lstopo-no-graphics --of xml` process) measured in the same
// run. Output: one JSON object on stdout. Not a test: it asserts nothing.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "accel/topology/loader.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

json summary(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
  };
  return {{"n", v.size()}, {"p50_ms", at(0.5)}, {"p99_ms", at(0.99)}};
}

json timeLoads(const accel::topology::LoadOptions& opts, int n) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    auto t = accel::topology::loadTopology(opts);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!t.ok()) return {{"error", t.error().message()}};
  }
  return summary(ms);
}

json timeLstopo(int n) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    pid_t pid = fork();
    if (pid == 0) {
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, STDOUT_FILENO);
      dup2(devnull, STDERR_FILENO);
      execlp("lstopo-no-graphics", "lstopo-no-graphics", "--of", "xml", "-", nullptr);
      _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return {{"error", "lstopo-no-graphics failed"}};
  }
  return summary(ms);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: topology_bench TOPOLOGY_DIR [ITERATIONS]\n");
    return 2;
  }
  const int n = argc > 2 ? std::atoi(argv[2]) : 20;
  json out;
  out["live"] = timeLoads({}, n);
  out["baseline_lstopo_process"] = timeLstopo(n);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(argv[1]))
    if (e.path().extension() == ".xml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    accel::topology::LoadOptions opts;
    opts.xml_path = f;
    out["xml"][f.filename().string()] = timeLoads(opts, n);
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
