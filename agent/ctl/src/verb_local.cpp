// accelctl topology / config check: verbs that work without the daemon.
#include "accel/common/config.h"
#include "accel/ctl/client.h"
#include "accel/topology/loader.h"
#include "accel/topology/render.h"

namespace accel::ctl {

int verbTopology(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  topo::LoadOptions opts;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--xml" && i + 1 < args.size()) {
      opts.xml_path = args[++i];
    } else {
      io.err("accelctl: topology: unexpected argument '" + args[i] + "'; usage: accelctl topology [--xml FILE] [--json]");
      return kUsage;
    }
  }
  auto t = topo::loadTopology(opts);
  if (!t.ok()) {
    io.err("accelctl: topology: " + t.error().message());
    return kNodeFault;
  }
  io.out(g.json ? topo::renderJson(*t) + "\n" : topo::renderTable(*t));
  return kOk;
}

int verbConfig(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  if (args.empty() || args[0] != "check" || args.size() > 2) {
    io.err("accelctl: config: usage: accelctl config check [FILE]");
    return kUsage;
  }
  GlobalOptions local = g;
  if (args.size() == 2) local.config_path = args[1];
  auto path = configPath(local, io);
  if (!path.ok()) { io.err("accelctl: config: " + path.error().message()); return kUsage; }
  auto s = checkConfig(*path);
  if (!s.ok()) {
    io.err(s.error().message());
    return kUsage;
  }
  io.out(*path + ": ok\n");
  return kOk;
}

}  // namespace accel::ctl
