#pragma once
// One ordinary user flooding the agent's public control socket, as a
// separate process: it holds up to `held` connections that send nothing
// (opening a new one for each the agent closes) and churns others (connect,
// close) as fast as it can, until stopped. Shared by the socket tests and
// bench/.
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace accel::testing {

struct FloodCounts {
  uint64_t connects = 0;          // connections made, held and churned
  uint64_t connect_failures = 0;  // connect() refused (backlog full) or failed
  uint64_t answered_busy = 0;     // held connections the agent answered and closed
  uint64_t closed_silently = 0;   // held connections the agent closed without a word
  uint64_t churned = 0;
};

class Flood {
 public:
  // Starts the flooding process as `uid` (and gid `uid`); needs root.
  Flood(const std::string& socket_path, uid_t uid, int held);
  ~Flood();  // stops it if still running
  Flood(const Flood&) = delete;
  Flood& operator=(const Flood&) = delete;

  bool running() const { return pid_ > 0; }
  // Stops the process and returns what it counted (zeros if it died).
  FloodCounts stop();

 private:
  pid_t pid_ = -1;
  int pipe_ = -1;
};

}  // namespace accel::testing
