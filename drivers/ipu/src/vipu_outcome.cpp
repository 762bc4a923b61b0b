#include "accel/ipu/vipu_outcome.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>

namespace accel::ipu {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool mentions(const std::string& text, std::initializer_list<std::string_view> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](std::string_view w) { return text.find(w) != std::string::npos; });
}

}  // namespace

VipuOutcome classifyVipu(const exec::ClientResult& r) {
  if (r.timed_out || r.term_signal != 0) return VipuOutcome::kTransient;
  if (r.exit_code == 0) return VipuOutcome::kOk;
  std::string text = lower(r.err + "\n" + r.out);
  if (mentions(text,
               {"connection refused", "unreachable", "unavailable", "timed out", "timeout",
                "deadline exceeded", "cannot connect", "could not connect", "no route to host"}))
    return VipuOutcome::kTransient;
  if (mentions(text, {"already exists"})) return VipuOutcome::kExists;
  if (mentions(text, {"not found", "does not exist", "no such partition"}))
    return VipuOutcome::kNotFound;
  if (mentions(text, {"power of two", "power of 2", "invalid", "divide", "must be"}))
    return VipuOutcome::kBadRequest;
  return VipuOutcome::kRefused;
}

}  // namespace accel::ipu
