// accelctl: hands its arguments to the verb table; nothing else lives here.
// slurm.conf's Prolog= and Epilog= name a program without arguments, so the
// same binary also answers to the names accel-prolog and accel-epilog.
#include <cstring>
#include <string>
#include <vector>

#include "accel/ctl/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const char* slash = std::strrchr(argv[0], '/');
  const std::string name = slash != nullptr ? slash + 1 : argv[0];
  if (name == "accel-prolog") args.insert(args.begin(), "prolog");
  if (name == "accel-epilog") args.insert(args.begin(), "epilog");
  return accel::ctl::runCli(args, accel::ctl::processIo());
}
