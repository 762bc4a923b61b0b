#pragma once
// The plugin's side of the control protocol (schemas/control.fbs): the
// requests it sends and what it needs of a reply, as plain values. Encoding
// and decoding are pure, so tests check them without a socket.
#include <sys/types.h>

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

std::vector<std::uint8_t> encodeJobRequest(std::uint32_t job_id);

enum class TaskEvent { kStarted, kExited };
std::vector<std::uint8_t> encodeTaskRequest(std::uint32_t job_id, std::uint32_t step_id, pid_t pid,
                                            std::uint64_t start_ticks, TaskEvent event,
                                            int exit_status);

enum class StepEvent { kStarted, kEnded };
std::vector<std::uint8_t> encodeStepRequest(std::uint32_t job_id, std::uint32_t step_id,
                                            StepEvent event, int exit_code);

// Verifies and reads a Reply. kParse for bytes that are not a valid Reply.
Result<DaemonReply> decodeReply(std::span<const std::uint8_t> bytes);

// "Ok", "NotFound", ... for messages.
const char* outcomeName(Outcome outcome);

}  // namespace accel::spank
