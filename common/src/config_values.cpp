// Decoding one configuration value according to its KeySpec (config_schema.h).
#include <climits>
#include <optional>

#include "accel/common/config_errors.h"
#include "accel/common/config_schema.h"

namespace accel {
namespace {

Error invalid(std::string message) {
  return Error(ErrorCode::kInvalidArgument, std::move(message));
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// Digits only (no sign, no blanks); nullopt when not a number, sets
// `overflow` when the digits do not fit in 64 bits.
std::optional<std::uint64_t> parseDigits(std::string_view text, bool* overflow) {
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (kNoMaximum - digit) / 10) {
      *overflow = true;
      return std::nullopt;
    }
    value = value * 10 + digit;
  }
  return value;
}

// Checks [min, max]; `show` renders a bound the way a file would write it.
template <typename Show>
Result<void> checkRange(const KeySpec& spec, std::string_view text, std::uint64_t value,
                        Show show) {
  if (value < spec.min) {
    return invalid(quoteForMessage(text) + " is below the minimum " + show(spec.min));
  }
  if (value > spec.max) {
    return invalid(quoteForMessage(text) + " is above the maximum " + show(spec.max));
  }
  return okStatus();
}

std::string showNumber(std::uint64_t n) { return std::to_string(n); }

Result<ConfigValue> decodePath(std::string_view text) {
  if (text.front() != '/') return invalid(quoteForMessage(text) + " is not an absolute path");
  if (text.size() >= PATH_MAX) {
    return invalid("path is " + std::to_string(text.size()) + " bytes long; the limit is " +
                   std::to_string(PATH_MAX - 1));
  }
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20) {
      return invalid(quoteForMessage(text) + " contains a control character");
    }
  }
  return ConfigValue(std::string(text));
}

Result<ConfigValue> decodeBool(std::string_view text) {
  for (std::string_view word : {"yes", "true", "1"}) {
    if (equalsIgnoreCase(text, word)) return ConfigValue(true);
  }
  for (std::string_view word : {"no", "false", "0"}) {
    if (equalsIgnoreCase(text, word)) return ConfigValue(false);
  }
  return invalid(quoteForMessage(text) + " is not a boolean (use yes, no, true, false, 1 or 0)");
}

Result<ConfigValue> decodeUint(const KeySpec& spec, std::string_view text) {
  bool overflow = false;
  auto value = parseDigits(text, &overflow);
  if (!value) {
    return invalid(quoteForMessage(text) + (overflow ? " is too large" : " is not a whole number"));
  }
  ACCEL_TRY(checkRange(spec, text, *value, showNumber));
  return ConfigValue(*value);
}

Result<ConfigValue> decodeSeconds(const KeySpec& spec, std::string_view text) {
  bool overflow = false;
  auto value = parseDigits(text, &overflow);
  if (!value) {
    if (overflow) return invalid(quoteForMessage(text) + " is too large");
    return invalid(quoteForMessage(text) + " is not a whole number of seconds");
  }
  if (*value > static_cast<std::uint64_t>(kMaxSlurmTimeSeconds)) {
    return invalid(quoteForMessage(text) + " is too large; the largest is " +
                   std::to_string(kMaxSlurmTimeSeconds));
  }
  ACCEL_TRY(checkRange(spec, text, *value, showNumber));
  return ConfigValue(std::chrono::seconds(static_cast<std::int64_t>(*value)));
}

Result<ConfigValue> decodeSlurmTime(const KeySpec& spec, std::string_view text) {
  Result<SlurmDuration> duration = parseSlurmTime(text);
  if (!duration.ok()) return duration.error();
  if (!duration->isUnlimited()) {
    auto show = [](std::uint64_t n) {
      if (n > static_cast<std::uint64_t>(kMaxSlurmTimeSeconds)) return std::string("UNLIMITED");
      return formatSlurmTime(SlurmDuration::fromSeconds(static_cast<std::int64_t>(n)));
    };
    ACCEL_TRY(checkRange(spec, text, static_cast<std::uint64_t>(duration->seconds()), show));
  }
  return ConfigValue(*duration);
}

Result<ConfigValue> decodeEnum(const KeySpec& spec, std::string_view text) {
  std::string list;
  for (std::size_t i = 0; i < spec.choices.size(); ++i) {
    if (equalsIgnoreCase(text, spec.choices[i])) return ConfigValue(EnumChoice{i});
    list += (i == 0 ? "" : ", ") + std::string(spec.choices[i]);
  }
  return invalid(quoteForMessage(text) + " is not one of " + list);
}

Result<ConfigValue> decodeSize(const KeySpec& spec, std::string_view text) {
  static constexpr std::string_view kSuffixes = "kmgt";
  std::string_view digits = text;
  std::uint64_t unit = 1;
  if (std::size_t at = kSuffixes.find(lower(text.back())); at != std::string_view::npos) {
    digits.remove_suffix(1);
    unit = std::uint64_t{1} << (10 * (at + 1));
  }
  bool overflow = false;
  auto value = parseDigits(digits, &overflow);
  if (!value) {
    if (overflow) return invalid(quoteForMessage(text) + " is too large");
    return invalid(quoteForMessage(text) +
                   " is not a size (a whole number of bytes, optionally followed by K, M, G "
                   "or T)");
  }
  if (*value > kNoMaximum / unit) return invalid(quoteForMessage(text) + " is too large");
  ACCEL_TRY(checkRange(spec, text, *value * unit, showNumber));
  return ConfigValue(*value * unit);
}

Result<ConfigValue> decodeByType(const KeySpec& spec, std::string_view text) {
  switch (spec.type) {
    case ValueType::kString:
      return ConfigValue(std::string(text));
    case ValueType::kPath:
      return decodePath(text);
    case ValueType::kBool:
      return decodeBool(text);
    case ValueType::kUint:
      return decodeUint(spec, text);
    case ValueType::kSeconds:
      return decodeSeconds(spec, text);
    case ValueType::kSlurmTime:
      return decodeSlurmTime(spec, text);
    case ValueType::kEnum:
      return decodeEnum(spec, text);
    case ValueType::kSize:
      return decodeSize(spec, text);
  }
  panic("unknown ValueType", __FILE__, __LINE__);
}

}  // namespace

std::string_view valueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kString:
      return "string";
    case ValueType::kPath:
      return "path";
    case ValueType::kBool:
      return "boolean";
    case ValueType::kUint:
      return "whole number";
    case ValueType::kSeconds:
      return "seconds";
    case ValueType::kSlurmTime:
      return "Slurm time";
    case ValueType::kEnum:
      return "one of";
    case ValueType::kSize:
      return "size";
  }
  return "unknown";
}

Result<ConfigValue> decodeValue(const KeySpec& spec, std::string_view text) {
  if (text.empty()) return invalid("empty value (to leave the key unset, leave it out)");
  if (text.size() > kMaxValueBytes) {
    return invalid("value is " + std::to_string(text.size()) + " bytes long; the limit is " +
                   std::to_string(kMaxValueBytes));
  }
  Result<ConfigValue> value = decodeByType(spec, text);
  if (!value.ok() && spec.secret) {
    // Most decoders quote the value; a secret must not reach a log that way.
    return invalid("not a valid " + std::string(valueTypeName(spec.type)) +
                   " (value not shown: the key is secret)");
  }
  return value;
}

}  // namespace accel
