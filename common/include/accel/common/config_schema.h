#pragma once
// Table-driven configuration: one table (a ConfigSchema) declares every key of
// a file: its name, type, default, whether it is required, its limits and its
// help text, and the field of the typed struct it fills. Parsing, checking and
// the Markdown reference are all driven by the same table, so a new key is one
// new row (see config_keys.cpp) and nothing else.
//
// Value types and what a file may write for them:
//   kString     any non-empty text (quote it if it contains blanks)
//   kPath       an absolute path
//   kBool       yes, no, true, false, 1, 0 (any letter case)
//   kUint       a whole number, within [min, max]
//   kSeconds    a whole number of seconds, within [min, max]
//   kSlurmTime  Slurm's time notation (slurm_time.h); min/max in seconds
//   kEnum       one of `choices` (any letter case)
//   kSize       a whole number of bytes, optionally with a K, M, G or T
//               suffix (powers of 1024, as in Slurm), within [min, max]
// An empty value (Key="") is an error for every type: to leave a key unset,
// leave it out.
#include <chrono>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <variant>
#include <vector>

#include "accel/common/result.h"
#include "accel/common/slurm_time.h"

namespace accel {

enum class ValueType { kString, kPath, kBool, kUint, kSeconds, kSlurmTime, kEnum, kSize };

// A kEnum value: the position of the chosen word in KeySpec::choices, which
// is also the value of the enum field it is stored in.
struct EnumChoice {
  std::size_t index = 0;
  bool operator==(const EnumChoice&) const = default;
};

// A decoded value. kString and kPath give std::string, kBool bool, kUint and
// kSize std::uint64_t, kSeconds std::chrono::seconds, kSlurmTime SlurmDuration,
// kEnum EnumChoice.
using ConfigValue =
    std::variant<std::string, bool, std::uint64_t, std::chrono::seconds, SlurmDuration, EnumChoice>;

inline constexpr std::uint64_t kNoMaximum = std::numeric_limits<std::uint64_t>::max();
// Longest value accepted for any key; paths are further held to PATH_MAX.
inline constexpr std::size_t kMaxValueBytes = 4096;

// Stores a decoded value into a field of the config struct behind `config`.
// Returns false only when the table binds a key to a field of the wrong type,
// which is a programming error (the loader aborts, and the unit tests that load
// every key catch it before anyone else can).
using StoreFn = bool (*)(void* config, const ConfigValue& value);

struct KeySpec {
  std::string_view name;  // canonical spelling; matched ignoring case
  ValueType type = ValueType::kString;
  std::string_view default_value;  // as a file would write it; empty: no default
  bool required = false;           // must appear in the file
  std::string_view required_if;    // name of a kBool key: required when that is true
  std::uint64_t min = 0;           // kUint, kSize, kSeconds, kSlurmTime: inclusive
  std::uint64_t max = kNoMaximum;
  std::vector<std::string_view> choices;  // kEnum, in the order of the enum's values
  bool secret = false;                    // the value never appears in a message
  std::string_view help;                  // one or more sentences for the reference
  StoreFn store = nullptr;
};

struct ConfigSchema {
  std::string_view file_name;                   // "accel.conf"
  std::string_view summary;                     // a paragraph for the reference
  const std::type_info* config_type = nullptr;  // the struct `store` functions write
  std::vector<KeySpec> keys;

  // Case-insensitive lookup; nullptr when no key has that name.
  const KeySpec* find(std::string_view name) const;
};

// ---- Binding fields: `.store = storeIn<&AccelConfig::state_dir>` ----

namespace config_detail {

template <typename T>
struct MemberOf;
template <typename C, typename F>
struct MemberOf<F C::*> {
  using Class = C;
};

inline bool assignValue(std::string& out, const ConfigValue& v) {
  const auto* s = std::get_if<std::string>(&v);
  if (s) out = *s;
  return s != nullptr;
}
inline bool assignValue(bool& out, const ConfigValue& v) {
  const auto* b = std::get_if<bool>(&v);
  if (b) out = *b;
  return b != nullptr;
}
inline bool assignValue(std::chrono::seconds& out, const ConfigValue& v) {
  const auto* s = std::get_if<std::chrono::seconds>(&v);
  if (s) out = *s;
  return s != nullptr;
}
inline bool assignValue(SlurmDuration& out, const ConfigValue& v) {
  const auto* d = std::get_if<SlurmDuration>(&v);
  if (d) out = *d;
  return d != nullptr;
}
// Any unsigned field; a table maximum larger than the field is a binding error.
template <std::unsigned_integral U>
requires(!std::same_as<U, bool>) bool assignValue(U& out, const ConfigValue& v) {
  const auto* n = std::get_if<std::uint64_t>(&v);
  if (!n || *n > std::numeric_limits<U>::max()) return false;
  out = static_cast<U>(*n);
  return true;
}
template <typename E>
requires std::is_enum_v<E>
bool assignValue(E& out, const ConfigValue& v) {
  const auto* e = std::get_if<EnumChoice>(&v);
  if (e) out = static_cast<E>(e->index);
  return e != nullptr;
}
template <typename T>
bool assignValue(std::optional<T>& out, const ConfigValue& v) {
  T value{};
  if (!assignValue(value, v)) return false;
  out = std::move(value);
  return true;
}

template <auto kMember>
bool storeField(void* config, const ConfigValue& value) {
  using Class = typename MemberOf<decltype(kMember)>::Class;
  return assignValue(static_cast<Class*>(config)->*kMember, value);
}

}  // namespace config_detail

template <auto kMember>
inline constexpr StoreFn storeIn = &config_detail::storeField<kMember>;

// ---- Decoding and applying ----

// Decodes `text` as a value of `spec` (type and limits). The error message
// has no location; callers prefix "FILE:LINE: key 'Key': ". For a secret key
// the message does not repeat the value.
Result<ConfigValue> decodeValue(const KeySpec& spec, std::string_view text);

// "string", "path", "boolean", ... as written in the reference.
std::string_view valueTypeName(ValueType type);

// Fills `*config` (of type *schema.config_type) from `text`: defaults first,
// then every entry of the file, then the required and required_if checks.
// Reports every problem found, each "FILE:LINE: key 'Key': problem", joined
// by '\n'. On error `*config` is partly written and must be discarded.
Status applySchema(const ConfigSchema& schema, std::string_view text, std::string_view file,
                   void* config);

// The typed front of applySchema: a complete C, or the errors. Nothing partial.
template <typename C>
Result<C> parseWithSchema(const ConfigSchema& schema, std::string_view text,
                          std::string_view file) {
  ACCEL_CHECK(schema.config_type != nullptr && *schema.config_type == typeid(C));
  C config{};
  ACCEL_TRY(applySchema(schema, text, file, &config));
  return config;
}

}  // namespace accel
