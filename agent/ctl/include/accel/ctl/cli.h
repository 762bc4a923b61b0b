#pragma once
// accelctl: one binary, one verb per job. The verbs and their help live in
// one table (cli.cpp). Everything the verbs touch in the outside world comes
// through CliIo, so tests run them with a chosen environment and capture
// what they print.
//
// Exit codes (the same for every verb; slurmd reads them for prolog/epilog):
//   0  success. For prolog also: the job's own request cannot be met here
//      (the job is failed through its tasks, the node is not drained), and a
//      job that asked for no accelerators while the daemon is down.
//   1  node fault: the daemon could not do its part. For prolog/epilog Slurm
//      drains the node, which is right: an operator must look.
//   2  usage: bad arguments, or Slurm's environment is missing/malformed.
//   3  the daemon is not running or did not answer in time.
//   4  permission denied.
//   5  no such job on this node.
#include <functional>
#include <string>
#include <vector>

namespace accel::ctl {

enum ExitCode { kOk = 0, kNodeFault = 1, kUsage = 2, kUnavailable = 3, kDenied = 4, kNotFound = 5 };

struct CliIo {
  std::function<const char*(const char*)> getenv;
  std::function<void(const std::string&)> out;  // stdout
  std::function<void(const std::string&)> err;  // stderr, one line per call
};

// The process's real environment and streams.
CliIo processIo();

int runCli(const std::vector<std::string>& args, const CliIo& io);

// The verbs, in the order of 'accelctl --help' (each has its own --help).
std::vector<std::string> verbNames();

}  // namespace accel::ctl
