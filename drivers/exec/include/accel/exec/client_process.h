#pragma once
// Runs a vendor's client program (vipu, csctl) as a bounded child process.
// Contract:
//  - argv[0] is a path or a name looked up in PATH; nothing goes through a shell.
//  - stdin is /dev/null; stdout and stderr are captured, each up to max_output
//    bytes (the rest is read and dropped, and `truncated` says so).
//  - the child runs in its own process group; at the deadline the whole group
//    gets SIGKILL, and when the client exits any helper it left behind in its
//    group is killed too, so a call never leaves a process behind.
//  - returns an error only when the program could not be started at all
//    (kNotFound for a missing program); a timeout or a non-zero exit is a
//    normal ClientResult the caller classifies.
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "accel/common/result.h"

namespace accel::exec {

struct ClientCall {
  std::vector<std::string> argv;
  std::chrono::milliseconds timeout{10000};
  // Added to (or replacing) the daemon's own environment for this call.
  std::vector<std::pair<std::string, std::string>> env;
  size_t max_output = 4u << 20;
};

struct ClientResult {
  int exit_code = -1;      // valid when !timed_out and term_signal == 0
  int term_signal = 0;     // the signal that ended the client, if any
  bool timed_out = false;  // the deadline passed and the group was killed
  bool truncated = false;
  std::string out;
  std::string err;
  std::chrono::microseconds elapsed{0};

  bool succeeded() const { return !timed_out && term_signal == 0 && exit_code == 0; }
  // One line for messages: "exit 1: Error: partition p42 not found".
  std::string describe() const;
};

Result<ClientResult> runClient(const ClientCall& call);

// How a caller retries a client call: attempts share one overall budget, and
// each waits backoff (doubling up to max_backoff) after a transient failure.
struct RetryPolicy {
  int attempts = 3;
  std::chrono::milliseconds budget{50000};
  std::chrono::milliseconds backoff{200};
  std::chrono::milliseconds max_backoff{2000};
};

}  // namespace accel::exec
