#pragma once
// The plugin's side of the control protocol (schemas/control.fbs): what it
// needs of a reply, as plain values. The requests it sends are built by
// accel/ipc/control_requests.h. Decoding is pure, so tests check it without
// a socket.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "accel/common/result.h"

namespace accel::spank {

// Mirrors control.fbs Outcome; kept separate so the plugin's logic does not
// depend on generated headers.
enum class Outcome {
  kOk,
  kBadRequest,
  kPermissionDenied,
  kNotFound,
  kUserError,
  kNodeFault,
  kBusy,
  kUnknown
};

// The part of JobInfo the plugin uses.
struct JobView {
  bool failed = false;  // JobState::Failed: the node could not prepare the job
  std::string state;    // the state's name, for messages
  std::vector<std::pair<std::string, std::string>> env;
  std::string last_error;
  std::vector<std::string> warnings;  // for the job's output, one line each
};

struct DaemonReply {
  Outcome outcome = Outcome::kUnknown;
  std::string message;
  std::optional<JobView> job;  // set when the reply carries a JobInfo
};

// Verifies and reads a Reply. kParse for bytes that are not a valid Reply.
Result<DaemonReply> decodeReply(std::span<const std::uint8_t> bytes);

// "Ok", "NotFound", ... for messages.
const char* outcomeName(Outcome outcome);

}  // namespace accel::spank
