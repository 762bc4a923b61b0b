#pragma once
// One call to accel-agentd from the plugin: a request out, a verified reply
// back, within a time bound. Retried within that bound only when the agent
// said Busy (it counts places per user, and the job's own user may hold its
// share with other connections) or refused the connection for a full
// backlog; otherwise not: slurmstepd is waiting, and the caller decides what
// an unreachable daemon means for the job.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "accel/common/result.h"
#include "accel/spank/daemon_messages.h"

namespace accel::spank {

// Errors: kUnavailable (nobody listens), kTimeout, kParse (a reply that is
// not a valid Reply), others from the socket layer. A reply with a failing
// Outcome is a success here; the caller reads its outcome.
Result<DaemonReply> callDaemon(const std::string& socket_path,
                               const std::vector<std::uint8_t>& request,
                               std::chrono::milliseconds timeout);

}  // namespace accel::spank
