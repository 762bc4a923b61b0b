// Fabric set-up and teardown time per job, in a private network namespace on
// veth pairs (root needed; the host's interfaces are never touched). Three
// figures, each over JOBS jobs run one after another:
//  - alone: each job is the only one on its NICs (link change, address,
//    route; on teardown the restore);
//  - shared: another job holds the NICs throughout (address only);
//  - baseline_ip_commands: what a shell prolog would run for the same
//    set-up and teardown (`ip` processes), measured in the same run.
// Output: one JSON object on stdout. Not a test: it asserts nothing.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "accel/common/safe_file.h"
#include "accel/fabric/manager.h"
#include "accel/fabric/netlink_links.h"
#include "temp_dir.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace accel::fabric;

const std::vector<std::string> kNics = {"hsi0", "ibs2f1"};

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

json summary(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
  };
  return {{"n", v.size()}, {"p50_ms", at(0.5)}, {"p99_ms", at(0.99)}};
}

bool shell(const std::string& command) { return std::system(command.c_str()) == 0; }

// Jobs first_job.. one after another; null on the first failure (printed).
json timeJobs(FabricManager& manager, uint32_t first_job, int jobs) {
  std::vector<double> up;
  std::vector<double> down;
  for (int i = 0; i < jobs; ++i) {
    const uint32_t job = first_job + static_cast<uint32_t>(i);
    auto t0 = Clock::now();
    auto fabric = manager.setUp(job, kNics);
    up.push_back(msSince(t0));
    t0 = Clock::now();
    auto status = fabric.ok() ? manager.tearDown(job) : accel::Status(fabric.error());
    down.push_back(msSince(t0));
    if (!status.ok()) {
      std::fprintf(stderr, "fabric_bench: job %u: %s\n", job, status.error().message().c_str());
      return nullptr;
    }
  }
  return {{"setup", summary(up)}, {"teardown", summary(down)}};
}

json timeIpCommands(int jobs) {
  std::vector<double> up;
  std::vector<double> down;
  for (int i = 0; i < jobs; ++i) {
    std::string set;
    std::string unset;
    for (size_t n = 0; n < kNics.size(); ++n) {
      const std::string& nic = kNics[n];
      const std::string addr = "10.9.1." + std::to_string(n + 1) + "/24";
      set += "ip link set " + nic + " mtu 9000 up && ip addr add " + addr + " dev " + nic +
             " && ip route append 10.10.0.0/16 dev " + nic + " && ";
      unset +=
          "ip addr del " + addr + " dev " + nic + " && ip link set " + nic + " mtu 1500 down && ";
    }
    auto t0 = Clock::now();
    bool ok = shell(set + "true");
    up.push_back(msSince(t0));
    t0 = Clock::now();
    ok = shell(unset + "true") && ok;
    down.push_back(msSince(t0));
    if (!ok) return nullptr;
  }
  return {{"setup", summary(up)}, {"teardown", summary(down)}};
}

}  // namespace

int main(int argc, char** argv) {
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 200;
  if (jobs <= 0) {
    std::fprintf(stderr, "usage: fabric_bench [JOBS]   (root; default 200)\n");
    return 2;
  }
  if (unshare(CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "fabric_bench: unshare(CLONE_NEWNET): %s (needs root)\n",
                 std::strerror(errno));
    return 1;
  }
  for (size_t i = 0; i < kNics.size(); ++i) {
    const std::string peer = "p" + std::to_string(i);
    if (!shell("ip link add " + kNics[i] + " type veth peer name " + peer)) return 1;
  }
  accel::support::TempDir dir("fabric-bench");
  FabricConfig config;
  config.mtu = 9000;
  config.address_range = "10.9.0.0/24";
  config.routes = {"10.10.0.0/16"};
  config.state_dir = dir.file("state");
  auto links = NetlinkLinks::open();
  auto manager = links.ok() ? FabricManager::open(config, std::move(*links))
                            : accel::Result<std::unique_ptr<FabricManager>>(links.error());
  if (!manager.ok()) {
    std::fprintf(stderr, "fabric_bench: %s\n", manager.error().message().c_str());
    return 1;
  }
  json out = {{"jobs", jobs}, {"nics_per_job", kNics.size()}};
  out["alone"] = timeJobs(**manager, 1000, jobs);
  auto holder = (*manager)->setUp(1, kNics);
  out["shared"] = holder.ok() ? timeJobs(**manager, 2000, jobs) : json(nullptr);
  if (!(*manager)->tearDown(1).ok()) out["shared"] = nullptr;
  out["baseline_ip_commands"] = timeIpCommands(jobs);
  (void)dir.remove();
  std::printf("%s\n", out.dump(2).c_str());
  return out["alone"].is_null() || out["shared"].is_null() ? 1 : 0;
}
