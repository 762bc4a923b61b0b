#include "accel/agent/cgroup_job.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace accel::agent {
namespace {

// "job_42" -> 42; anything else unset.
std::optional<uint32_t> jobComponent(std::string_view part) {
  constexpr std::string_view kPrefix = "job_";
  if (part.size() <= kPrefix.size() || part.substr(0, kPrefix.size()) != kPrefix) {
    return std::nullopt;
  }
  std::string_view digits = part.substr(kPrefix.size());
  uint32_t id = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || end != digits.data() + digits.size() || id == 0) return std::nullopt;
  return id;
}

}  // namespace

std::optional<uint32_t> jobIdFromCgroup(std::string_view text) {
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    // ID:CONTROLLERS:PATH; the path is what follows the second ':'.
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view path = line.substr(second + 1);
    while (!path.empty()) {
      size_t slash = path.find('/');
      if (auto id = jobComponent(path.substr(0, slash))) return id;
      path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    }
  }
  return std::nullopt;
}

std::optional<uint32_t> jobOfPid(uint32_t pid, const std::string& proc_root) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/cgroup");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return jobIdFromCgroup(text.str());
}

}  // namespace accel::agent
