#include "accel/nvml/xid.h"

#include <climits>

#include "accel/telemetry/telemetry_source.h"

namespace accel::nvml {
namespace {

using telemetry::XidClass;
using telemetry::XidReport;

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// A decimal of at most 10 digits that fits 32 bits, consumed.
std::optional<uint32_t> takeDecimal(std::string_view& s) {
  size_t len = 0;
  while (len < s.size() && isDigit(s[len])) ++len;
  if (len == 0 || len > 10) return std::nullopt;
  uint64_t v = 0;
  for (size_t i = 0; i < len; ++i) v = v * 10 + uint64_t(s[i] - '0');
  if (v > UINT32_MAX) return std::nullopt;
  s.remove_prefix(len);
  return static_cast<uint32_t>(v);
}

bool take(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// At most `max` bytes of `s`, every byte outside printable ASCII as '?'.
std::string printable(std::string_view s, size_t max) {
  std::string out(s.substr(0, max));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return out;
}

// The field up to the next ", " (or the end), consumed with its separator.
std::string_view takeField(std::string_view& s) {
  const size_t end = s.find(", ");
  std::string_view field = s.substr(0, end);
  s.remove_prefix(end == std::string_view::npos ? s.size() : end + 2);
  return field;
}

}  // namespace

std::optional<telemetry::XidReport> parseXidLine(std::string_view line) {
  if (line.size() > XidReport::kMaxLine) return std::nullopt;
  const size_t at = line.find("NVRM: Xid (");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view s = line.substr(at + 11);
  (void)take(s, "PCI:");
  // The device, "dddd:bb:dd" (a 4- or 8-digit domain): a bus id without its function.
  const size_t close = s.find("): ");
  if (close == std::string_view::npos || close > 16) return std::nullopt;
  auto bus_id = telemetry::normalizePciBusId(std::string(s.substr(0, close)) + ".0");
  if (!bus_id) return std::nullopt;
  s.remove_prefix(close + 3);
  auto code = takeDecimal(s);
  if (!code) return std::nullopt;
  XidReport r;
  r.code = *code;
  r.device = bus_id->substr(0, bus_id->size() - 2);
  if (!take(s, ", ") && !s.empty()) return std::nullopt;
  // Newer drivers: pid=N (or '<unknown>'), name=NAME, then the text.
  if (s.starts_with("pid=")) {
    std::string_view pid = takeField(s).substr(4);
    if (auto n = takeDecimal(pid); n && pid.empty() && *n > 0) r.pid = *n;
    if (s.starts_with("name=")) {
      std::string_view name = takeField(s).substr(5);
      if (name != "<unknown>") r.process = printable(name, XidReport::kMaxProcess);
    }
  }
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  r.text = printable(s, XidReport::kMaxText);
  return r;
}

// NVIDIA's Xid catalogue ("Xid Errors", the GPU deployment and management
// documentation, and the codes DCGM's health checks treat as fatal); the
// table and what each class leads to: README.md.
telemetry::XidClass classifyXid(uint32_t code) {
  switch (code) {
    case 13:  // graphics engine exception: the application's kernel faulted
    case 31:  // GPU memory page fault: the application touched memory it did not map
    case 43:  // GPU stopped processing: the application's channel was reset
    case 45:  // preemptive cleanup after the application's work was stopped
    case 68:  // video processor exception, from the application's stream
      return XidClass::kApplication;
    case 48:   // double-bit ECC error
    case 63:   // ECC page retirement or row remapping recorded
    case 64:   // ECC page retirement or row remapping failed
    case 74:   // NVLink error
    case 79:   // GPU has fallen off the bus
    case 92:   // high single-bit ECC error rate
    case 93:   // non-fatal violation of the provisioned InfoROM
    case 94:   // contained ECC error
    case 95:   // uncontained ECC error
    case 119:  // GSP RPC timeout
    case 120:  // GSP error
      return XidClass::kHardware;
    default:
      return XidClass::kOther;
  }
}

}  // namespace accel::nvml
