#include "accel/ctl/cli.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "accel/ctl/verbs.h"

namespace accel::ctl {
namespace {

using VerbFn = int (*)(const std::vector<std::string>&, const GlobalOptions&, const CliIo&);

struct Verb {
  const char* name;
  const char* args;
  const char* summary;
  VerbFn run;
};

// The one table of verbs: dispatch and help both come from it.
constexpr Verb kVerbs[] = {
    {"prolog", "", "make this job ready (run by slurmd as Prolog=; reads SLURM_* variables)", verbProlog},
    {"epilog", "", "remove everything of this job (run by slurmd as Epilog=)", verbEpilog},
    {"status", "[--json]", "is this node healthy: daemon, config, topology, jobs, devices, errors", verbStatus},
    {"jobs", "[--json]", "jobs on this node (a user sees only its own)", verbJobs},
    {"job", "ID [--json]", "one job: state, devices, directory, task environment", verbJob},
    {"topology", "[--xml FILE] [--json]", "this node's NUMA nodes, accelerators and NICs, as the agent sees them",
     verbTopology},
    {"events", "[--job ID] [--node NAME] [--follow] [--database PATH] [--json]",
     "the aggregator's record of job events (on its host, or from a shared database)", verbEvents},
    {"wait-appliance", "JOB ID", "wait for an appliance job of your job; exit 0 if it succeeded (surrogate steps)",
     verbWaitAppliance},
    {"config", "check [FILE]", "validate accel.conf (and vipu.conf beside it)", verbConfig},
};

std::string usage() {
  std::string u =
      "usage: accelctl [--config FILE] VERB [ARGS]\n\n"
      "Talks to accel-agentd, the accel-agent node daemon.\n\nverbs:\n";
  for (const auto& v : kVerbs) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-8s %-22s %s\n", v.name, v.args, v.summary);
    u += line;
  }
  u += "\noptions:\n"
       "  --config FILE  accel.conf to use (default: beside slurm.conf, via SLURM_CONF)\n"
       "  --json         machine-readable output\n"
       "  --help         this text; 'accelctl VERB --help' for one verb\n\n"
       "exit codes: 0 ok, 1 node fault, 2 usage, 3 daemon not running, 4 permission denied, 5 no such job\n";
  return u;
}

}  // namespace

CliIo processIo() {
  return CliIo{[](const char* n) { return static_cast<const char*>(std::getenv(n)); },
               [](const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); },
               [](const std::string& s) {
                 std::string line = s + "\n";
                 (void)!::write(STDERR_FILENO, line.data(), line.size());
               }};
}

int runCli(const std::vector<std::string>& args, const CliIo& io) {
  GlobalOptions g;
  std::vector<std::string> rest;
  bool help = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--json") g.json = true;
    else if (a == "--help" || a == "-h") help = true;
    else if (a == "--config") {
      if (i + 1 >= args.size()) { io.err("accelctl: --config needs a file"); return kUsage; }
      g.config_path = args[++i];
    } else rest.push_back(a);
  }
  if (rest.empty()) {
    if (help) { io.out(usage()); return kOk; }
    io.err("accelctl: no verb given; see 'accelctl --help'");
    return kUsage;
  }
  for (const auto& v : kVerbs) {
    if (rest[0] != v.name) continue;
    if (help) {
      io.out(std::string("usage: accelctl ") + v.name + " " + v.args + "\n  " + v.summary + "\n");
      return kOk;
    }
    return v.run({rest.begin() + 1, rest.end()}, g, io);
  }
  io.err("accelctl: unknown verb '" + rest[0] + "'; see 'accelctl --help'");
  return kUsage;
}

}  // namespace accel::ctl
