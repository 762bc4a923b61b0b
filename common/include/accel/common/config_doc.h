#pragma once
// The Markdown reference of every configuration file and key, rendered from
// the key tables. docs/config-reference.md is this function's output; a unit
// test keeps the two equal (regenerate with `accel-config-doc > FILE`).
#include <string>

namespace accel {

// Deterministic: the same tables give the same bytes.
std::string renderConfigReference();

}  // namespace accel
