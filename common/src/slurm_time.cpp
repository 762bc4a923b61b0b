#include "accel/common/slurm_time.h"

#include <array>
#include <cstdio>
#include <optional>

#include "accel/common/config_errors.h"

namespace accel {
namespace {

constexpr std::int64_t kSecondsPerDay = 86400;
constexpr std::int64_t kSecondsPerHour = 3600;
constexpr std::int64_t kSecondsPerMinute = 60;
constexpr std::size_t kMaxQuoted = 40;

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 'a' + 'A');
    if (x != y) return false;
  }
  return true;
}

Error invalid(std::string_view text, std::string_view reason) {
  return Error(ErrorCode::kInvalidArgument, quoteForMessage(text, kMaxQuoted) +
                                                " is not a Slurm time (" + std::string(reason) +
                                                "); use " + std::string(slurmTimeForms()));
}

// One field of digits. Values above kMaxSlurmTimeSeconds are reported as such
// (nullopt with `too_large`), so no arithmetic below can overflow.
std::optional<std::int64_t> parseField(std::string_view digits, bool* too_large) {
  if (digits.empty()) return std::nullopt;
  std::int64_t value = 0;
  for (char c : digits) {
    if (!isDigit(c)) return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > kMaxSlurmTimeSeconds) {
      *too_large = true;
      return std::nullopt;
    }
  }
  return value;
}

// Splits "a:b:c" into at most three fields; more is an error reported by the caller.
std::size_t splitColons(std::string_view text, std::array<std::string_view, 3>* fields) {
  std::size_t count = 0;
  while (true) {
    std::size_t colon = text.find(':');
    if (count == fields->size()) return count + 1;
    (*fields)[count++] = text.substr(0, colon);
    if (colon == std::string_view::npos) return count;
    text.remove_prefix(colon + 1);
  }
}

// Why `text` (no whitespace, only digits '-' ':') fails the shape check, or
// empty when the shape is acceptable.
std::string_view shapeProblem(std::string_view text) {
  std::size_t dash = text.find('-');
  if (dash == 0) return "negative times are not allowed";
  if (dash != std::string_view::npos) {
    if (text.find('-', dash + 1) != std::string_view::npos) return "more than one '-'";
    if (text.substr(0, dash).find(':') != std::string_view::npos) {
      return "the day count must come first";
    }
    if (dash + 1 == text.size()) return "hours are missing after the day count";
  }
  return {};
}

}  // namespace

SlurmDuration SlurmDuration::fromSeconds(std::int64_t seconds) {
  ACCEL_CHECK(seconds >= 0);
  return SlurmDuration(seconds);
}

std::int64_t SlurmDuration::seconds() const {
  ACCEL_CHECK(!isUnlimited());
  return seconds_;
}

std::strong_ordering SlurmDuration::operator<=>(const SlurmDuration& other) const {
  if (isUnlimited() || other.isUnlimited()) {
    return isUnlimited() <=> other.isUnlimited();
  }
  return seconds_ <=> other.seconds_;
}

std::string_view slurmTimeForms() {
  return "MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED";
}

Result<SlurmDuration> parseSlurmTime(std::string_view text) {
  if (text.empty()) return invalid(text, "empty");
  if (equalsIgnoreCase(text, "UNLIMITED") || equalsIgnoreCase(text, "INFINITE")) {
    return SlurmDuration::unlimited();
  }
  if (text == "-1") return invalid(text, "write UNLIMITED for no limit");
  for (char c : text) {
    if (c == ' ' || c == '\t') return invalid(text, "whitespace is not allowed");
    if (!isDigit(c) && c != '-' && c != ':') return invalid(text, "unexpected character");
  }
  if (std::string_view problem = shapeProblem(text); !problem.empty()) {
    return invalid(text, problem);
  }

  std::size_t dash = text.find('-');
  bool has_days = dash != std::string_view::npos;
  std::string_view clock = has_days ? text.substr(dash + 1) : text;
  std::array<std::string_view, 3> fields;
  std::size_t count = splitColons(clock, &fields);
  if (count > 3) return invalid(text, "too many fields");

  bool too_large = false;
  std::array<std::int64_t, 3> values{};
  for (std::size_t i = 0; i < count; ++i) {
    auto value = parseField(fields[i], &too_large);
    if (!value) return invalid(text, too_large ? "too large" : "a field is empty");
    values[i] = *value;
  }
  std::int64_t days = 0;
  if (has_days) {
    auto value = parseField(text.substr(0, dash), &too_large);
    if (!value) return invalid(text, too_large ? "too large" : "a field is empty");
    days = *value;
  }

  // Which unit each field carries depends on the form: with a day part the
  // clock reads HH[:MM[:SS]]; without, MM, MM:SS or HH:MM:SS.
  static constexpr std::array<std::int64_t, 3> kWithDays = {kSecondsPerHour, kSecondsPerMinute, 1};
  static constexpr std::array<std::array<std::int64_t, 3>, 3> kWithoutDays = {{
      {kSecondsPerMinute, 0, 0},
      {kSecondsPerMinute, 1, 0},
      {kSecondsPerHour, kSecondsPerMinute, 1},
  }};
  const auto& units = has_days ? kWithDays : kWithoutDays[count - 1];
  std::int64_t total = days * kSecondsPerDay;  // both bounded: no overflow in int64
  for (std::size_t i = 0; i < count; ++i) total += values[i] * units[i];
  if (total > kMaxSlurmTimeSeconds) {
    return invalid(text, "too large; the largest is " +
                             formatSlurmTime(SlurmDuration::fromSeconds(kMaxSlurmTimeSeconds)));
  }
  return SlurmDuration::fromSeconds(total);
}

std::string formatSlurmTime(SlurmDuration duration) {
  if (duration.isUnlimited()) return "UNLIMITED";
  std::int64_t total = duration.seconds();
  long long days = total / kSecondsPerDay;
  long long hours = (total % kSecondsPerDay) / kSecondsPerHour;
  long long minutes = (total % kSecondsPerHour) / kSecondsPerMinute;
  long long seconds = total % kSecondsPerMinute;
  char buf[48];
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", days, hours, minutes, seconds);
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", hours, minutes, seconds);
  }
  return buf;
}

}  // namespace accel
