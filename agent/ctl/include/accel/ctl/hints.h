#pragma once
// Error lines that say what to do next. Each returns one line (without the
// "accelctl: " prefix) for an error met while reaching the daemon or reading
// the config.
#include <string>

#include "accel/common/result.h"

namespace accel::ctl {

// An error of callDaemon(): the daemon is not running (how to start it and
// where the socket is expected), busy, slow, or the socket may not be opened.
std::string callErrorHint(const Error& e, const std::string& socket,
                          const std::string& config_path);

// accel.conf could not be read: where it was looked for and how to point
// accelctl elsewhere.
std::string configErrorHint(const Error& e);

// The daemon answered NotFound for `job_id` to a person's query.
std::string unknownJobHint(const std::string& message);

}  // namespace accel::ctl
