#pragma once
// The verbs of accelctl. Each takes its arguments after the verb name and
// returns an exit code (see cli.h). Shared flags are parsed by the caller.
#include <optional>
#include <string>
#include <vector>

#include "accel/ctl/cli.h"

namespace accel::ctl {

struct GlobalOptions {
  std::optional<std::string> config_path;  // --config
  bool json = false;                       // --json
};

int verbProlog(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io);
int verbEpilog(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io);
int verbStatus(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io);
int verbJobs(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io);
int verbJob(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io);
int verbTopology(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io);
int verbEvents(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io);
int verbNodes(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io);
int verbWaitAppliance(const std::vector<std::string>& args, const GlobalOptions& g,
                      const CliIo& io);
int verbReport(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io);
int verbConfig(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io);
int verbClearFault(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io);

}  // namespace accel::ctl
