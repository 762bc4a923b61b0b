#pragma once
// `accelctl report JOB` for people: the aggregator's report (one JSON
// object, format version 1; docs/user-guide.md lists its fields) as text for
// a terminal. --json prints the object itself, unchanged.
#include <string>

#include "accel/common/result.h"

namespace accel::ctl {

// The plain line first ("job 42: held 4 GPUs, used 2 of them, mean 31%"),
// then the job's state, nodes, idle time, limit and errors, then one aligned
// row per device with units. Errors: not JSON, or not a report of format 1
// (kParse).
Result<std::string> reportTable(const std::string& json);

}  // namespace accel::ctl
