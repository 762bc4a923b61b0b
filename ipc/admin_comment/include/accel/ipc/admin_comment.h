#pragma once
// AdminComment is shared: other tools (jobstats writes "JS1:...") keep their
// own text there. accel-agent owns exactly one segment, "accel=" followed by
// one JSON object, separated from other content by ';'
// (docs/accounting-format.md).
#include <string>
#include <string_view>

namespace accel::ipc {

// `existing` with its accel= segment replaced by "accel=" + `json` (or the
// segment appended when there was none). Everything else is kept byte for
// byte. A damaged accel= segment (an object that never closes) is replaced up
// to the end of the text, the only place it can end.
std::string mergeAdminComment(std::string_view existing, std::string_view json);

// The JSON of the accel= segment in `comment`; empty when there is none.
std::string extractAccelSegment(std::string_view comment);

}  // namespace accel::ipc
