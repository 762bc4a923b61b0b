// accelctl: hands its arguments to the verb table; nothing else lives here.
#include "accel/ctl/cli.h"

int main(int argc, char** argv) {
  return accel::ctl::runCli(std::vector<std::string>(argv + 1, argv + argc), accel::ctl::processIo());
}
