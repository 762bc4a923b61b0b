// accelctl topology / config check: verbs that work without the daemon.
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>

#include "accel/common/config.h"
#include "accel/ctl/client.h"

namespace accel::ctl {

// accelctl is linked statically so that slurmd's hooks start fast; hwloc
// (and the libudev it needs) cannot be, so the topology is shown by
// accel-agentd, which owns it, from the same directory as this program.
namespace {

// Runs `program`, installed beside accelctl, in place of this process.
int execBeside(const std::string& program, std::vector<std::string> argv, const std::string& verb,
               const CliIo& io) {
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    io.err("accelctl: " + verb + ": cannot find my own directory: " + std::strerror(errno));
    return kNodeFault;
  }
  self[n] = '\0';
  std::string dir(self);
  const std::string path = dir.substr(0, dir.rfind('/')) + "/" + program;
  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  ::execv(path.c_str(), cargv.data());
  io.err("accelctl: " + verb + ": cannot run " + path + ": " + std::strerror(errno) +
         " (accelctl and " + program + " are installed side by side)");
  return kNodeFault;
}

}  // namespace

int verbTopology(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  std::vector<std::string> argv{"accel-agentd", "--print-topology"};
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--xml" && i + 1 < args.size()) {
      argv.push_back("--xml");
      argv.push_back(args[++i]);
    } else {
      io.err("accelctl: topology: unexpected argument '" + args[i] +
             "'; usage: accelctl topology [--xml FILE] [--json]");
      return kUsage;
    }
  }
  if (g.json) argv.push_back("--json");
  return execBeside("accel-agentd", argv, "topology", io);
}

// The aggregator's record of job events: one job's through this node's agent
// (which asks the aggregator, AggregatorQueryAddress), or read where its
// database is (the aggregator's host, or a shared path given with
// --database), which also lists every job's.
int verbEvents(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  std::vector<std::string> argv{"accel-aggregatord", "events"};
  EventsArgs asked;
  bool job = false, database = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool takes_value = a == "--job" || a == "--node" || a == "--database";
    if (takes_value && i + 1 < args.size()) {
      const std::string& v = args[++i];
      if (a == "--job") {
        uint32_t id = 0;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), id);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size()) {
          io.err("accelctl: events: --job takes a job number, not '" + v + "'");
          return kUsage;
        }
        asked.job_id = id;
        job = true;
      }
      if (a == "--node") asked.node = v;
      database = database || a == "--database";
      argv.push_back(a);
      argv.push_back(v);
    } else if (a == "--follow") {
      asked.follow = true;
      argv.push_back(a);
    } else {
      io.err("accelctl: events: unexpected argument '" + a +
             "'; usage: accelctl events [--job ID] [--node NAME] [--follow] [--database PATH] "
             "[--json]");
      return kUsage;
    }
  }
  if (job && !database) return eventsThroughAgent(asked, g, io);
  if (g.json) argv.push_back("--json");
  return execBeside("accel-aggregatord", argv, "events", io);
}

// Every node the aggregator has heard from and whether it is alive, read
// where its database is, as for events.
int verbNodes(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  std::vector<std::string> argv{"accel-aggregatord", "nodes"};
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--database" && i + 1 < args.size()) {
      argv.push_back(args[i]);
      argv.push_back(args[++i]);
    } else {
      io.err("accelctl: nodes: unexpected argument '" + args[i] +
             "'; usage: accelctl nodes [--database PATH] [--json]");
      return kUsage;
    }
  }
  if (g.json) argv.push_back("--json");
  return execBeside("accel-aggregatord", argv, "nodes", io);
}

int verbConfig(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  if (args.empty() || args[0] != "check" || args.size() > 2) {
    io.err("accelctl: config: usage: accelctl config check [FILE]");
    return kUsage;
  }
  GlobalOptions local = g;
  if (args.size() == 2) local.config_path = args[1];
  auto path = configPath(local, io);
  if (!path.ok()) {
    io.err("accelctl: config: " + path.error().message());
    return kUsage;
  }
  auto s = checkConfig(*path);
  if (!s.ok()) {
    io.err(s.error().message());
    return kUsage;
  }
  io.out(*path + ": ok\n");
  return kOk;
}

}  // namespace accel::ctl
