#pragma once
// Runs a vendor's client program (vipu, csctl) as a bounded child process.
// Contract:
//  - argv[0] is a path or a name looked up in PATH; nothing goes through a shell.
//  - stdin is /dev/null; stdout and stderr are captured, each up to max_output
//    bytes (the rest is read and dropped, and `truncated` says so).
//  - the child runs in its own process group; at the deadline the whole group
//    gets SIGKILL, and when the client exits any helper it left behind in its
//    group is killed too, so a call never leaves a process behind.
//  - a vendor client gets a clean environment, not the daemon's: a fixed PATH,
//    LC_ALL=C, HOME, the variables named by setPassedEnvironment() that the
//    daemon has, and the call's own env;
//  - describe() is fit for users to read: printable ASCII only, one line,
//    bounded, with the call's secrets replaced by "***";
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
  // The daemon's own programs (not vendors') keep its whole environment.
  bool inherit_environment = false;
  // Values that must never appear in what describe() says (access keys).
  std::vector<std::string> secrets;
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
  std::vector<std::string> secrets;  // from the call, for describe()

  bool succeeded() const { return !timed_out && term_signal == 0 && exit_code == 0; }
  // One line for messages: "exit 1: Error: partition p42 not found".
  std::string describe() const;
};

Result<ClientResult> runClient(const ClientCall& call);

// Names of the daemon's environment variables that vendor clients also get
// (an operator's proxy settings, say, or the hardware mock's state). Set once
// at start, before any call.
void setPassedEnvironment(std::vector<std::string> names);

// `text` made fit for a user's eyes: every byte outside printable ASCII
// becomes '?', each secret becomes "***", and at most `max` bytes are kept.
std::string sanitizeForUsers(std::string text, const std::vector<std::string>& secrets,
                             size_t max = 300);

// The environment a client starts with (without the call's own env), as
// KEY=VALUE strings: for tests.
std::vector<std::string> baseEnvironment();

// How a caller retries a client call: attempts share one overall budget, and
// each waits backoff (doubling up to max_backoff) after a transient failure.
struct RetryPolicy {
  int attempts = 3;
  std::chrono::milliseconds budget{50000};
  std::chrono::milliseconds backoff{200};
  std::chrono::milliseconds max_backoff{2000};
};

}  // namespace accel::exec
