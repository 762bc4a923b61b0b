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
  const char*
      details;  // the verb's own --help: what it does, each option, exit codes worth knowing
  VerbFn run;
};

// The one table of verbs: dispatch and help both come from it.
constexpr Verb kVerbs[] = {
    {"prolog", "", "make this job ready (run by slurmd as Prolog=; reads SLURM_* variables)",
     "Run by slurmd as Prolog=/usr/sbin/accel-prolog (accelctl under another name), as root or "
     "SlurmUser.\n"
     "Reads SLURM_JOB_ID, SLURM_JOB_UID, SLURM_JOB_GID, SLURM_JOB_USER, SLURM_JOB_GPUS and the "
     "SPANK_ACCEL_*\n"
     "variables of the job's options, and the job's nodes: SLURMD_NODENAME, SLURM_NODELIST (or\n"
     "SLURM_JOB_NODELIST) and SLURM_JOB_NUM_NODES. The first node of the list does the job's "
     "once-per-job\n"
     "work (its V-IPU partition); the others wait for it. Exits 0 unless the node itself is at "
     "fault (1: Slurm\n"
     "drains the node).\n"
     "To run it by hand: SLURM_JOB_ID=ID SLURM_JOB_UID=UID accel-prolog\n",
     verbProlog},
    {"epilog", "", "remove everything of this job (run by slurmd as Epilog=)",
     "Run by slurmd as Epilog=/usr/sbin/accel-epilog, as root or SlurmUser. Idempotent: running it "
     "again, or\n"
     "for a job the daemon never saw, succeeds. To finish a job's cleanup by hand: SLURM_JOB_ID=ID "
     "accel-epilog\n",
     verbEpilog},
    {"status", "[--json]", "is this node healthy: daemon, config, topology, jobs, devices, errors",
     "Says at a glance whether the node is healthy (first line 'health ok' or what needs "
     "attention), then:\n"
     "the daemon and since when, accel.conf and when it was read, the topology, the last call to "
     "each vendor\n"
     "client (V-IPU controller, appliance), the link to accel-aggregatord and its backlog, the "
     "jobs, which job\n"
     "holds each accelerator, and the node faults of late with their time. Anyone may run it.\n"
     "  --json   the same as one JSON object\n",
     verbStatus},
    {"jobs", "[--json]", "jobs on this node (a user sees only its own)",
     "One line per job on this node: id, user, state, when it became ready, its devices.\n"
     "Users see only their own jobs; root and SlurmUser see every job.\n"
     "  --json   a JSON array of jobs, each as 'accelctl job ID --json' shows it\n",
     verbJobs},
    {"job", "ID [--json]", "one job: state, devices, directory, task environment",
     "The job's state, devices, directory, the variables its tasks receive and its appliance "
     "jobs.\n"
     "Exit 5 when the job has nothing on this node (or is another user's).\n"
     "  ID       the Slurm job id\n"
     "  --json   machine-readable\n",
     verbJob},
    {"topology", "[--xml FILE] [--json]",
     "this node's NUMA nodes, accelerators and NICs, as the agent sees them",
     "What the agent sees of the node (read live through hwloc, as accel-agentd does).\n"
     "  --xml FILE   read a captured hwloc XML topology instead of this machine\n"
     "  --json       machine-readable\n",
     verbTopology},
    {"events", "[--job ID] [--node NAME] [--follow] [--database PATH] [--json]",
     "the aggregator's record of job events (one job's from any node; all from its database)",
     "With --job and no --database: asks this node's agent, which asks the aggregator\n"
     "(AggregatorQueryAddress in accel.conf); root and SlurmUser see every job, others their own.\n"
     "Otherwise reads accel-aggregatord's database (runs 'accel-aggregatord events').\n"
     "  --job ID          events of one job\n"
     "  --node NAME       events from one node\n"
     "  --follow          keep printing new events as they are recorded, until stopped\n"
     "  --database PATH   the database to read (default: Database in accel-aggregator.conf)\n"
     "  --json            one JSON object per event\n",
     verbEvents},
    {"report", "ID [--json]",
     "what a job did with its accelerators: utilization, memory, energy, idle time, errors",
     "The job's accelerator report, from the aggregator (AggregatorQueryAddress in accel.conf), "
     "asked\n"
     "through this node's agent: for a running job the figures its nodes sent last (at most a "
     "minute old),\n"
     "for a finished one those of its summary. First a plain line ('held 4 GPUs, used 2 of them, "
     "mean 31%'),\n"
     "then the job's state, idle time, appliance limit and errors, and one row per GPU. Your own "
     "jobs only;\n"
     "root and SlurmUser see every job. Exit 5 when the aggregator knows no such job of yours.\n"
     "  ID       the Slurm job id\n"
     "  --json   the report as one JSON object (fields in the user guide)\n",
     verbReport},
    {"nodes", "[--database PATH] [--json]",
     "every node the aggregator has heard from: alive, late or without heartbeats",
     "Reads accel-aggregatord's database (runs 'accel-aggregatord nodes'). A node is alive while "
     "its\n"
     "latest event is at most three of its HeartbeatIntervals old, late after that; no-heartbeat "
     "when\n"
     "it never sent one.\n"
     "  --database PATH   the database to read (default: Database in accel-aggregator.conf)\n"
     "  --json            one JSON object per node\n",
     verbNodes},
    {"wait-appliance", "JOB ID",
     "wait for an appliance job of your job; exit 0 if it succeeded (surrogate steps)",
     "Waits until the appliance job ID of Slurm job JOB ends; exit 0 if it succeeded, 1 if it "
     "failed or was\n"
     "cancelled. The agent runs it as the task of each surrogate step; a job's owner may run it "
     "too.\n"
     "  JOB   the Slurm job id\n"
     "  ID    the appliance job id, e.g. wsjob-vpd7iavtknrtvgonhe7mog\n",
     verbWaitAppliance},
    {"config", "check [FILE]", "validate accel.conf (and vipu.conf beside it)",
     "Checks accel.conf (default: beside slurm.conf) or FILE, and vipu.conf in the same directory; "
     "prints\n"
     "every problem as FILE:LINE: key 'Key': problem and exits 2, or prints 'FILE: ok' and exits "
     "0.\n"
     "  FILE   the accel.conf to check\n",
     verbConfig},
    {"clear-fault", "", "forget this node's GPU hardware faults (root and SlurmUser)",
     "A hardware Xid of a GPU (read from the kernel log) drains the node and stays in 'accelctl "
     "status'\n"
     "until an operator clears it here, also across restarts of the agent. Resuming the node in "
     "Slurm\n"
     "stays yours: scontrol update nodename=NODE state=resume. Root and SlurmUser only.\n",
     verbClearFault},
};

std::string usage() {
  std::string u =
      "usage: accelctl [--config FILE] VERB [ARGS]\n\n"
      "Talks to accel-agentd, the accel-agent node daemon.\n\nverbs:\n";
  for (const auto& v : kVerbs) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-14s %-22s %s\n", v.name, v.args, v.summary);
    u += line;
  }
  u += "\noptions:\n"
       "  --config FILE  accel.conf to use (default: beside slurm.conf, via SLURM_CONF)\n"
       "  --json         machine-readable output\n"
       "  --help         this text; 'accelctl VERB --help' for one verb\n\n"
       "exit codes: 0 ok, 1 node fault, 2 usage, 3 daemon not running, 4 permission denied, 5 no "
       "such job\n";
  return u;
}

std::string verbUsage(const Verb& v) {
  return std::string("usage: accelctl [--config FILE] ") + v.name + (*v.args ? " " : "") + v.args +
         "\n  " + v.summary + "\n\n" + v.details +
         "  --config FILE   accel.conf to use (default: beside slurm.conf, via SLURM_CONF)\n";
}

std::string verbList() {
  std::string l;
  for (const auto& v : kVerbs) l += std::string(" ") + v.name;
  return l;
}

}  // namespace

std::vector<std::string> verbNames() {
  std::vector<std::string> names;
  for (const auto& v : kVerbs) names.push_back(v.name);
  return names;
}

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
    if (a == "--json")
      g.json = true;
    else if (a == "--help" || a == "-h")
      help = true;
    else if (a == "--config") {
      if (i + 1 >= args.size()) {
        io.err("accelctl: --config needs a file");
        return kUsage;
      }
      g.config_path = args[++i];
    } else
      rest.push_back(a);
  }
  if (rest.empty()) {
    if (help) {
      io.out(usage());
      return kOk;
    }
    io.err("accelctl: no verb given; see 'accelctl --help'");
    return kUsage;
  }
  for (const auto& v : kVerbs) {
    if (rest[0] != v.name) continue;
    if (help) {
      io.out(verbUsage(v));
      return kOk;
    }
    return v.run({rest.begin() + 1, rest.end()}, g, io);
  }
  io.err("accelctl: unknown verb '" + rest[0] + "'; the verbs are" + verbList() +
         " (see 'accelctl --help')");
  return kUsage;
}

}  // namespace accel::ctl
