#pragma once
// Parsers for the values users give to the plugin's options. Each takes the
// text exactly as typed (no trimming: Slurm hands it over verbatim) and says
// precisely what is wrong, so the caller can build a one-line refusal.
#include <cstdint>
#include <string>
#include <string_view>

#include "accel/common/result.h"

namespace accel::spank {

// Why a count or a number of seconds was refused. Callers phrase the message,
// because only they know what the number counts and what range is allowed.
enum class NumberProblem {
  kNone,
  kEmpty,      // ""
  kNegative,   // "-3"
  kNotNumber,  // "abc", "4x", " 4", "+4", "0x10", "4.0"
  kTooLarge,   // above the largest value the caller accepts (after parsing)
};

struct ParsedNumber {
  std::uint64_t value = 0;
  NumberProblem problem = NumberProblem::kNone;
};

// A whole decimal number of at most `max` (digits only; leading zeros are
// fine, as in Slurm). Never throws, never overflows: a number with more
// digits than fit is kTooLarge.
ParsedNumber parseWholeNumber(std::string_view text, std::uint64_t max);

// A few words for a NumberProblem, to follow "--opt=value: " in a message:
// "not a whole number", "negative numbers are not allowed", ...
std::string_view describe(NumberProblem problem);

// The largest signal number Linux knows (SIGRTMAX with glibc's reservation
// included: 64). Slurm's own parser takes any 16-bit value; we do not pass on
// numbers that cannot name a signal.
inline constexpr int kMaxSignalNumber = 64;
// sbatch --signal: lead time between 0 and 65535 seconds, 60 by default.
inline constexpr std::uint32_t kMaxSignalLead = 65535;
inline constexpr std::uint32_t kDefaultSignalLead = 60;

// A signal as sbatch --signal reads it: a name from Slurm's list (HUP, INT,
// QUIT, ABRT, KILL, ALRM, TERM, USR1, USR2, URG, CONT, STOP, TSTP, TTIN, TTOU,
// XCPU), in any letter case, with or without "SIG"; or a number from 1 to
// kMaxSignalNumber. Returns 0 for anything else.
int signalNumber(std::string_view text);

// Who gets the warning, as sbatch --signal's prefix says: the job's steps
// (no prefix, or R:), or its batch shell alone (B:).
enum class SignalTarget : std::uint8_t { kSteps = 0, kBatch = 1 };

// --appliance-signal=[{R|B}:]SIG[@SECONDS].
struct SignalSpec {
  int number = 0;
  SignalTarget target = SignalTarget::kSteps;
  std::uint32_t lead_sec = kDefaultSignalLead;
};

// Parses [{R|B}:]SIG[@SECONDS] (RB: and BR: too, any letter case).
// Errors (kInvalidArgument) say what is wrong and what
// is allowed, without naming the option (the caller prefixes that).
Result<SignalSpec> parseSignalSpec(std::string_view text);

}  // namespace accel::spank
