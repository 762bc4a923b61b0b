#include "accel/telemetry/telemetry_source.h"

#include <cstdio>

namespace accel::telemetry {
namespace {

// Reads from min_digits to max_digits hex digits from the front of `text`
// and advances past them; unset (text untouched) when fewer are there.
std::optional<uint32_t> takeHex(std::string_view& text, size_t min_digits, size_t max_digits) {
  uint32_t value = 0;
  size_t n = 0;
  while (n < text.size() && n < max_digits) {
    char c = text[n];
    uint32_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<uint32_t>(c - 'A' + 10);
    } else {
      break;
    }
    value = value * 16 + digit;
    ++n;
  }
  if (n < min_digits) return std::nullopt;
  text.remove_prefix(n);
  return value;
}

bool takeChar(std::string_view& text, char c) {
  if (text.empty() || text.front() != c) return false;
  text.remove_prefix(1);
  return true;
}

}  // namespace

std::optional<std::string> normalizePciBusId(std::string_view text) {
  // domain: 4 digits (kernel, hwloc) or 8 (NVML); bus 2, device 2, function 1.
  auto domain = takeHex(text, 4, 8);
  if (!domain || *domain > 0xffff || !takeChar(text, ':')) return std::nullopt;
  auto bus = takeHex(text, 2, 2);
  if (!bus || !takeChar(text, ':')) return std::nullopt;
  auto device = takeHex(text, 2, 2);
  if (!device || *device > 0x1f || !takeChar(text, '.')) return std::nullopt;
  auto function = takeHex(text, 1, 1);
  if (!function || *function > 7 || !text.empty()) return std::nullopt;
  char out[16];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", *domain, *bus, *device, *function);
  return std::string(out);
}

}  // namespace accel::telemetry
