#pragma once
// Fault injection for the fake clients. Rules live in <dir>/faults, one per
// line: `<op> <action> [arg] [once]`, `#` starts a comment.
//   op:     the verb the fake is asked to do (create, remove, list, get,
//           get-jobs, cancel, submit) or `*` for any.
//   action: fail [exit_code] | down | hang | delay <ms> | garbage
// The first rule that matches the op and is not spent decides. A `once` rule
// is spent after it fires once; the marker is <dir>/faults.fired/<line>-<hash>,
// so editing a rule's text re-arms it.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/result.h"

namespace accel::hw_mock {

enum class FaultAction { kFail, kDown, kHang, kDelay, kGarbage };

struct FaultRule {
  std::string op;
  FaultAction action = FaultAction::kFail;
  int exit_code = 1;  // kFail
  int delay_ms = 0;   // kDelay
  bool once = false;
  int line = 0;      // 1-based line in the faults file
  std::string text;  // the rule as written, trimmed
};

// Parses the faults file's content; a malformed line is an error naming it.
Result<std::vector<FaultRule>> parseFaults(std::string_view content);

struct FaultSite {
  std::string dir;                      // the fake's state directory
  std::string op;                       // the verb being run
  std::string down_message;             // printed on stderr for `down`
  std::function<void()> print_garbage;  // writes the op's malformed output
};

// Consults <site.dir>/faults. Returns -1 when the program should carry on
// (no rule, or a delay that has elapsed), else the exit code to return now.
// `hang` never returns. A malformed faults file exits with code 2.
int injectFault(const FaultSite& site);

}  // namespace accel::hw_mock
