// accel-agentd: parses flags and runs the daemon; nothing else lives here.
// The composition root: the one file that wires in an adapter from slurm/
// (libslurm, asked only in the child processes of --job-presence and
// --drain-node).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "accel/agentd/daemon.h"
#include "accel/agentd/fabric_setup.h"
#include "accel/agentd/job_output.h"
#include "accel/agentd/slurmctld.h"
#include "accel/agentd/telemetry_setup.h"
#include "accel/agentd/vendors.h"
#include "accel/common/config.h"
#include "accel/common/log.h"
#include "accel/slurm/jobs.h"
#include "accel/topology/loader.h"
#include "accel/topology/render.h"

namespace {

constexpr const char* kUsage =
    "usage: accel-agentd [--config FILE] [--topology XML] [--hw-mock DIR]\n"
    "\n"
    "The accel-agent node daemon. Runs in the foreground (systemd Type=notify).\n"
    "  --config FILE    accel.conf to use (default: accel.conf beside slurm.conf,\n"
    "                   found through SLURM_CONF)\n"
    "  --topology XML   read the node's topology from this hwloc XML file instead\n"
    "                   of the live system (overrides TopologyFile)\n"
    "  --hw-mock DIR    run against the fake vendor clients in DIR/bin and the\n"
    "                   topology DIR/topology.xml (overrides HwMockDir; testing only)\n"
    "  --version        print the version and exit\n"
    "\n"
    "usage: accel-agentd --print-topology [--xml FILE] [--json]\n"
    "  print the node's topology as the agent sees it, and exit (what\n"
    "  'accelctl topology' shows)\n";

int usageError(const std::string& what) {
  std::fprintf(stderr, "accel-agentd: %s\n%s", what.c_str(), kUsage);
  return 2;
}

}  // namespace

// --print-topology [--xml FILE] [--json]: one look at the topology, then exit.
int printTopology(int argc, char** argv) {
  accel::topology::LoadOptions opts;
  bool json = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(
          "usage: accel-agentd --print-topology [--xml FILE] [--json]\n"
          "  print the node's topology as the agent sees it (from the live system, or\n"
          "  from the hwloc XML FILE), as a table or with --json as JSON, and exit\n",
          stdout);
      return 0;
    }
    if (a == "--json")
      json = true;
    else if (a == "--xml" && i + 1 < argc)
      opts.xml_path = argv[++i];
    else {
      std::fprintf(stderr, "accelctl: topology: unexpected argument '%s'\n", a.c_str());
      return 2;
    }
  }
  auto t = accel::topology::loadTopology(opts);
  if (!t.ok()) {
    std::fprintf(stderr, "accelctl: topology: %s\n", t.error().message().c_str());
    return 1;
  }
  std::string out =
      json ? accel::topology::renderJson(*t) + "\n" : accel::topology::renderTable(*t);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

// --job-presence JOB: "alive" or "gone", as slurmctld sees the job. The
// daemon runs this in a child process: libslurm ends the process on a
// configuration it cannot read, which must never be the daemon's own.
int printJobPresence(accel::agentd::Slurmctld& slurmctld, int argc, char** argv) {
  char* end = nullptr;
  unsigned long id = argc == 3 ? std::strtoul(argv[2], &end, 10) : 0;
  if (id == 0 || id > 0xffffffffUL || *end != '\0') {
    std::fprintf(stderr, "accel-agentd: --job-presence needs a job id\n");
    return 2;
  }
  auto p = slurmctld.jobPresence(static_cast<uint32_t>(id));
  if (!p.ok()) {
    std::fprintf(stderr, "accel-agentd: %s\n", p.error().message().c_str());
    return 1;
  }
  using accel::agentd::JobPresence;
  std::puts(*p == JobPresence::kAlive ? "alive" : *p == JobPresence::kGone ? "gone" : "unknown");
  return 0;
}

// --drain-node NODE REASON: drains NODE in slurmctld with REASON; run in a
// child process like --job-presence, when a prolog finds a configuration fault.
int drainNodeCommand(accel::agentd::Slurmctld& slurmctld, int argc, char** argv) {
  if (argc != 4 || argv[2][0] == '\0' || argv[3][0] == '\0') {
    std::fprintf(stderr, "accel-agentd: --drain-node needs a node name and a reason\n");
    return 2;
  }
  auto s = slurmctld.drainNode(argv[2], argv[3]);
  if (!s.ok()) {
    std::fprintf(stderr, "accel-agentd: %s\n", s.error().message().c_str());
    return 1;
  }
  return 0;
}

// --signal-job JOB SIG steps|full: signals the job through slurmctld, as
// `scancel --signal` does; run in a child process, at an appliance limit on a
// node whose jobs are not in cgroups of their own.
int signalJobCommand(accel::agentd::Slurmctld& slurmctld, int argc, char** argv) {
  char* end = nullptr;
  unsigned long id = argc == 5 ? std::strtoul(argv[2], &end, 10) : 0;
  bool id_ok = id != 0 && id <= 0xffffffffUL && *end == '\0';
  long sig = argc == 5 ? std::strtol(argv[3], &end, 10) : 0;
  bool sig_ok = sig > 0 && sig < 65 && *end == '\0';
  std::string scope = argc == 5 ? argv[4] : "";
  if (!id_ok || !sig_ok || (scope != "steps" && scope != "full")) {
    std::fprintf(stderr, "accel-agentd: --signal-job needs a job id, a signal and steps|full\n");
    return 2;
  }
  auto s = slurmctld.signalJob(static_cast<uint32_t>(id), static_cast<int>(sig), scope == "steps");
  // A job that is over (or ending) has nothing left to signal.
  if (!s.ok() && s.error().code() == accel::ErrorCode::kNotFound) return 0;
  if (!s.ok()) {
    std::fprintf(stderr, "accel-agentd: %s\n", s.error().message().c_str());
    return 1;
  }
  return 0;
}

// --tell-job JOB LINE file|sruns: appends LINE to a batch job's output file
// as the job's user; run in a child process by the idle check (idle_jobs.h).
// An interactive job has no file: with sruns, slurmctld hands LINE to its
// srun or salloc, which prints it in the user's terminal (as `scontrol
// notify`). A batch job is not notified too: slurmctld would only give the
// batch step the same line again, as an error of slurmstepd's, and never its
// sruns. Prints "written", "notified" or "no file".
int tellJobCommand(accel::agentd::Slurmctld& slurmctld, int argc, char** argv) {
  char* end = nullptr;
  unsigned long id = argc == 5 ? std::strtoul(argv[2], &end, 10) : 0;
  std::string how = argc == 5 ? argv[4] : "";
  if (id == 0 || id > 0xffffffffUL || *end != '\0' || argv[3][0] == '\0' ||
      (how != "file" && how != "sruns")) {
    std::fprintf(stderr, "accel-agentd: --tell-job needs a job id, a line and file|sruns\n");
    return 2;
  }
  const auto job = static_cast<uint32_t>(id);
  auto output = slurmctld.jobOutput(job);
  if (!output.ok()) {
    std::fprintf(stderr, "accel-agentd: %s\n", output.error().message().c_str());
    return 1;
  }
  if (output->path.empty()) {
    if (how != "sruns") {
      std::puts("no file");
      return 0;
    }
    auto s = slurmctld.notifyJob(job, argv[3]);
    if (!s.ok()) {
      std::fprintf(stderr, "accel-agentd: %s\n", s.error().message().c_str());
      return 1;
    }
    std::puts("notified");
    return 0;
  }
  // From here on nothing of root's is used: the path is the user's choice.
  auto dropped = accel::agentd::becomeJobUser(output->uid, output->gid);
  auto written = dropped.ok() ? accel::agentd::appendLineToFile(output->path, argv[3]) : dropped;
  if (!written.ok()) {
    std::fprintf(stderr, "accel-agentd: job %lu: %s\n", id, written.error().message().c_str());
    return 1;
  }
  std::puts("written");
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--print-topology") == 0) return printTopology(argc, argv);
  accel::slurm::LibslurmSlurmctld slurmctld;
  if (argc >= 2 && std::strcmp(argv[1], "--job-presence") == 0)
    return printJobPresence(slurmctld, argc, argv);
  if (argc >= 2 && std::strcmp(argv[1], "--drain-node") == 0)
    return drainNodeCommand(slurmctld, argc, argv);
  if (argc >= 2 && std::strcmp(argv[1], "--signal-job") == 0)
    return signalJobCommand(slurmctld, argc, argv);
  if (argc >= 2 && std::strcmp(argv[1], "--tell-job") == 0)
    return tellJobCommand(slurmctld, argc, argv);
  accel::log::init("accel-agentd", accel::log::Level::kInfo);
  accel::agentd::DaemonOptions opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--version") {
      std::printf("accel-agentd %s\n", ACCEL_VERSION);
      return 0;
    }
    if (a == "--config") {
      const char* v = value("--config");
      if (v == nullptr) return usageError("--config needs a file");
      opts.config_path = v;
    } else if (a == "--topology") {
      const char* v = value("--topology");
      if (v == nullptr) return usageError("--topology needs a file");
      opts.topology_xml = v;
    } else if (a == "--hw-mock") {
      const char* v = value("--hw-mock");
      if (v == nullptr) return usageError("--hw-mock needs a directory");
      opts.hw_mock_dir = v;
    } else {
      return usageError("unknown argument '" + a + "'");
    }
  }
  if (opts.config_path.empty()) {
    auto p = accel::defaultConfigPath(std::getenv("SLURM_CONF"), accel::kAccelConfName);
    if (!p.ok()) {
      accel::log::error("start: " + p.error().message());
      return 1;
    }
    opts.config_path = *p;
  }
  opts.set_up_vendors = accel::agentd::setUpVendors;   // the real vendor clients
  opts.set_up_fabric = accel::agentd::makeFabricStep;  // the real kernel, over netlink
  opts.open_telemetry = accel::agentd::openNvml;       // NVML, loaded at run time
  opts.decode_xid = accel::agentd::nvmlXidDecoder();   // GPU Xids in the kernel log
  accel::agentd::Daemon daemon(opts);
  auto started = daemon.start();
  if (!started.ok()) {
    accel::log::error("start: " + started.error().message() + "; not started");
    return 1;
  }
  return daemon.run();
}
