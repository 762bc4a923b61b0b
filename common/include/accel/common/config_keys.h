#pragma once
// The key tables of accel.conf and vipu.conf (defined in config_keys.cpp).
// These tables are the single source of truth for parsing, checking and the
// generated reference (docs/config-reference.md).
#include <vector>

#include "accel/common/config_schema.h"

namespace accel {

const ConfigSchema& accelConfigSchema();
const ConfigSchema& vipuConfigSchema();

// Every schema, in the order the reference documents them.
std::vector<const ConfigSchema*> allConfigSchemas();

}  // namespace accel
