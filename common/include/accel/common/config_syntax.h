#pragma once
// The Key=Value file syntax of slurm.conf, which accel.conf and vipu.conf use.
// This layer knows nothing of particular keys: it turns text into entries and
// reports lines it cannot read. Typed checking is in config_schema.h.
//
// Rules, following Slurm's own parser (src/common/parse_config.c):
// - A '#' starts a comment that runs to the end of the line, wherever it is,
//   even inside double quotes. "\#" is a literal '#'.
// - A backslash makes the next character literal ("\\" is one backslash) and
//   is itself dropped. A line whose last non-blank character is an unpaired
//   backslash continues on the next line.
// - Blank lines and lines holding only a comment are ignored.
// - An entry is Key=Value. Blanks around '=' are allowed. Several entries may
//   share a line, separated by blanks, as in slurm.conf ("A=1 B=2").
// - A value runs to the next blank, or is enclosed in double quotes and may
//   then contain blanks ("a b"); a quoted value must be followed by a blank
//   or the end of the line. Quotes are not part of the value.
// - A carriage return at the end of a line is ignored (files edited on
//   Windows); any other control byte makes the line an error.
// Keys are returned as written; matching them case-insensitively is the
// schema's job.
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/config_errors.h"
#include "accel/common/result.h"

namespace accel {

struct ConfigEntry {
  std::string key;    // as written in the file
  std::string value;  // quotes removed, escapes resolved; may be empty ("")
  int line = 0;       // 1-based line where the entry's (continued) line starts

  bool operator==(const ConfigEntry&) const = default;
};

// Splits `text` into entries. Syntax errors are added to `errors` (using its
// file name); lines without errors still yield their entries, so a caller can
// report every problem of a file in one pass.
std::vector<ConfigEntry> scanConfigText(std::string_view text, ConfigErrors& errors);

// The same as one value: all entries, or all syntax errors joined by '\n'.
// `file` names the source in messages ("accel.conf:3: ...").
Result<std::vector<ConfigEntry>> parseConfigEntries(std::string_view text, std::string_view file);

}  // namespace accel
