#pragma once
// Slurm's time-limit notation (sbatch --time, partition MaxTime, ...), read and
// written the way Slurm does, so values pass between Slurm and the agent
// without surprises.
//
// Accepted forms (the same as Slurm's time_str2secs()):
//   MM            minutes: a bare number is MINUTES, not seconds ("90" = 1h30m)
//   MM:SS         minutes and seconds
//   HH:MM:SS      hours, minutes and seconds
//   D-HH          days and hours
//   D-HH:MM       days, hours and minutes
//   D-HH:MM:SS    days, hours, minutes and seconds
//   UNLIMITED, INFINITE   no limit (any letter case)
//
// Like Slurm, no field except the first is range-checked: "0:90" is 90 seconds,
// "1:75:00" is 2h15m, "1-30" is 1 day and 30 hours. Slurm adds the fields up
// without checking, and rejecting what Slurm accepts would make a limit that
// works in sbatch fail here. Unlike Slurm we refuse what Slurm only accepts
// by accident: "-1" (its internal alias for no limit; write UNLIMITED), a day
// part with nothing after it ("2-"), a negative day count ("-2-00"), and totals
// that overflow Slurm's own 32-bit seconds (above kMaxSlurmTimeSeconds).
// Whitespace anywhere is an error; callers trim if their syntax allows it.
//
// What a zero limit means is the caller's business (for sbatch it means "no
// limit"); the parser returns zero seconds.
#include <chrono>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "accel/common/result.h"

namespace accel {

// The largest finite time Slurm can hold: its parser works in a signed 32-bit
// count of seconds (24855-03:14:07).
inline constexpr std::int64_t kMaxSlurmTimeSeconds = 2147483647;

// A non-negative number of seconds, or "unlimited". Unlimited compares greater
// than every finite duration.
class SlurmDuration {
 public:
  static constexpr SlurmDuration unlimited() { return SlurmDuration(kUnlimited); }
  // Aborts on a negative count: a negative duration is a bug in the caller.
  static SlurmDuration fromSeconds(std::int64_t seconds);

  // Zero seconds.
  constexpr SlurmDuration() = default;

  bool isUnlimited() const { return seconds_ == kUnlimited; }
  // Aborts when unlimited: check isUnlimited() first.
  std::int64_t seconds() const;
  std::chrono::seconds toChrono() const { return std::chrono::seconds(seconds()); }

  bool operator==(const SlurmDuration&) const = default;
  std::strong_ordering operator<=>(const SlurmDuration& other) const;

 private:
  static constexpr std::int64_t kUnlimited = -1;
  explicit constexpr SlurmDuration(std::int64_t seconds) : seconds_(seconds) {}
  std::int64_t seconds_ = 0;
};

// Parses one of the forms above. Errors (kInvalidArgument) quote the input and
// list the accepted forms, e.g. "'1:2:3:4' is not a Slurm time (too many
// fields); use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED".
Result<SlurmDuration> parseSlurmTime(std::string_view text);

// Formats as Slurm prints limits: "D-HH:MM:SS" from one day up, "HH:MM:SS"
// below, "UNLIMITED" for no limit. parseSlurmTime(formatSlurmTime(d)) == d for
// every d up to kMaxSlurmTimeSeconds.
std::string formatSlurmTime(SlurmDuration duration);

// The accepted forms as one phrase, for error messages and documentation.
std::string_view slurmTimeForms();

}  // namespace accel
