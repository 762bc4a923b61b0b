#pragma once
// Checks for text that arrives from outside (requests, environment) before
// it is stored, logged or put into JSON.
#include <cstddef>
#include <string_view>

namespace accel {

// True when `s` is valid UTF-8 of at most `max_bytes` with no control
// characters (below 0x20, or 0x7f). Empty text is clean.
bool isCleanText(std::string_view s, std::size_t max_bytes = 256);

}  // namespace accel
