// Applying a ConfigSchema to the text of a file (config_schema.h).
#include "accel/common/config_schema.h"

#include <algorithm>

#include "accel/common/config_errors.h"
#include "accel/common/config_syntax.h"

namespace accel {
namespace {

// Typo suggestions are only computed for plausible key names; a garbage
// "key" of a megabyte must not cost a quadratic distance computation.
constexpr std::size_t kMaxSuggestLength = 64;

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Edit distance counting an insertion, a deletion, a substitution or a swap
// of two neighbours as one edit each (optimal string alignment), ignoring
// letter case. Swaps count as one because they are the commonest typo.
std::size_t editDistance(std::string_view a, std::string_view b) {
  const std::size_t width = b.size() + 1;
  std::vector<std::size_t> older(width), previous(width), current(width);
  for (std::size_t j = 0; j < width; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j < width; ++j) {
      std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      bool swapped = i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
                     lower(a[i - 2]) == lower(b[j - 1]);
      if (swapped) current[j] = std::min(current[j], older[j - 2] + 1);
    }
    std::swap(older, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

// The known key a mistyped `key` most likely meant, or nullptr.
const KeySpec* suggestKey(const ConfigSchema& schema, std::string_view key) {
  if (key.size() > kMaxSuggestLength) return nullptr;
  const KeySpec* best = nullptr;
  std::size_t best_distance = 0;
  for (const KeySpec& spec : schema.keys) {
    std::size_t distance = editDistance(key, spec.name);
    std::size_t allowed = std::max<std::size_t>(1, spec.name.size() / 3);
    if (distance <= allowed && (best == nullptr || distance < best_distance)) {
      best = &spec;
      best_distance = distance;
    }
  }
  return best;
}

// What applySchema learns about each key of the schema, by index.
struct KeyState {
  int line = 0;                      // where the file sets it; 0: not set
  std::optional<ConfigValue> value;  // from the file or the default
};

void applyDefaults(const ConfigSchema& schema, void* config, std::vector<KeyState>& states) {
  for (std::size_t i = 0; i < schema.keys.size(); ++i) {
    const KeySpec& spec = schema.keys[i];
    ACCEL_CHECK(spec.store != nullptr);
    if (spec.default_value.empty()) continue;
    Result<ConfigValue> value = decodeValue(spec, spec.default_value);
    if (!value.ok())
      panic(("bad default for key " + std::string(spec.name)).c_str(), __FILE__, __LINE__);
    ACCEL_CHECK(spec.store(config, *value));
    states[i].value = std::move(*value);
  }
}

void applyEntry(const ConfigSchema& schema, const ConfigEntry& entry, void* config,
                std::vector<KeyState>& states, ConfigErrors& errors) {
  const KeySpec* spec = schema.find(entry.key);
  if (spec == nullptr) {
    const KeySpec* guess = suggestKey(schema, entry.key);
    errors.add(entry.line, entry.key,
               guess ? "unknown key (did you mean '" + std::string(guess->name) + "'?)"
                     : std::string("unknown key"));
    return;
  }
  KeyState& state = states[static_cast<std::size_t>(spec - schema.keys.data())];
  if (state.line != 0) {
    errors.add(entry.line, entry.key,
               "set more than once (first at line " + std::to_string(state.line) + ")");
    return;
  }
  state.line = entry.line;
  Result<ConfigValue> value = decodeValue(*spec, entry.value);
  if (!value.ok()) {
    errors.add(entry.line, entry.key, value.error().message());
    return;
  }
  ACCEL_CHECK(spec->store(config, *value));
  state.value = std::move(*value);
}

void checkRequired(const ConfigSchema& schema, const std::vector<KeyState>& states,
                   ConfigErrors& errors) {
  for (std::size_t i = 0; i < schema.keys.size(); ++i) {
    const KeySpec& spec = schema.keys[i];
    if (states[i].line != 0) continue;
    if (spec.required) {
      errors.add(0, spec.name, "required but not set");
      continue;
    }
    if (spec.required_if.empty()) continue;
    const KeySpec* condition = schema.find(spec.required_if);
    ACCEL_CHECK(condition != nullptr && condition->type == ValueType::kBool);
    const KeyState& cond = states[static_cast<std::size_t>(condition - schema.keys.data())];
    if (!cond.value || !std::get<bool>(*cond.value)) continue;
    std::string where = cond.line != 0 ? "it is set at line " + std::to_string(cond.line)
                                       : std::string("by default");
    errors.add(0, spec.name,
               "required when " + std::string(condition->name) + " is enabled (" + where + ")");
  }
}

}  // namespace

const KeySpec* ConfigSchema::find(std::string_view name) const {
  for (const KeySpec& spec : keys) {
    if (spec.name.size() != name.size()) continue;
    bool same = std::equal(name.begin(), name.end(), spec.name.begin(),
                           [](char a, char b) { return lower(a) == lower(b); });
    if (same) return &spec;
  }
  return nullptr;
}

Status applySchema(const ConfigSchema& schema, std::string_view text, std::string_view file,
                   void* config) {
  std::vector<KeyState> states(schema.keys.size());
  applyDefaults(schema, config, states);
  ConfigErrors errors{std::string(file)};
  for (const ConfigEntry& entry : scanConfigText(text, errors)) {
    applyEntry(schema, entry, config, states, errors);
  }
  checkRequired(schema, states, errors);
  return errors.toStatus();
}

}  // namespace accel
