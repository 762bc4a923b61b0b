#pragma once
// Getting topology XML to hwloc: reading the file, and a look at the text
// before hwloc parses it, so the common mistakes (empty file, not an hwloc
// export, a newer format) get a message that says what to do instead of
// hwloc's bare EINVAL.
#include <filesystem>
#include <string>
#include <string_view>

#include "accel/common/result.h"

namespace accel::topology::detail {

struct HwlocVersion {
  unsigned major = 0;
  unsigned minor = 0;
};

// Fails with kParse when `text` is blank or has no <topology> element, and
// with kUnsupported when its format (<topology version="X.Y">) is newer than
// `reader` can read. hwloc 2.x reads formats 1.x and 2.x; exports without a
// version attribute are format 1. Messages start with `origin`.
Status checkTopologyXmlHeader(std::string_view text, std::string_view origin, HwlocVersion reader);

// The whole file as text. kNotFound / kPermissionDenied / kIo from the
// system, kInvalidArgument for a directory or a file over 256 MiB (no
// topology is that big). Messages start with `origin`.
Result<std::string> readTopologyXmlFile(const std::filesystem::path& path, std::string_view origin);

}  // namespace accel::topology::detail
