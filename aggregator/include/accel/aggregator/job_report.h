#pragma once
// `accelctl report JOB`: what a job did with its accelerators, composed from
// its summary (JobSummary) by the aggregator, which alone sees every node of
// the job. For each node the figures of its epilog once that is in, before
// that the latest GpuProgress of the node (live). The document is JSON with
// format version "v" (docs/user-guide.md, "What your job did with its
// accelerators", lists every field); keys are only ever added within a
// version. accelctl prints it as it comes (--json) or as a table.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "accel/aggregator/summary.h"

namespace accel::aggregator {

// Rows of `devices`, of `nodes` and names in `missing_nodes` at most; the
// rest are counted (devices_left_out, nodes_left_out). A job on hundreds of
// nodes so stays within the 64 KiB that the query and control messages
// carry; a report still over kMaxReportBytes (an unusually large error
// list) is sent without its devices and nodes rows, counted as left out.
inline constexpr size_t kMaxReportDevices = 128;
inline constexpr size_t kMaxReportNodes = 128;
inline constexpr size_t kMaxReportBytes = size_t{48} * 1024;

nlohmann::ordered_json composeReport(const JobSummary& summary);

// The plain-language line (the report's "line"), e.g. "held 4 GPUs, used 2 of
// them, mean 31%"; from the report's own fields.
std::string plainLine(const nlohmann::ordered_json& report);

// The report as one line of JSON (a newline never occurs in it).
std::string reportText(const JobSummary& summary);

}  // namespace accel::aggregator
