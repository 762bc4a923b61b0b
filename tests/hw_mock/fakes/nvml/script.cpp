#include "script.h"

#include <charconv>

namespace accel::hw_mock::nvml {
namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// Calls `each(line_number, words)` for every line that is not blank or a
// comment; stops at the first false.
template <typename Each>
bool forEachLine(std::string_view text, Each each) {
  int number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    line = line.substr(0, line.find('#'));
    auto w = words(line);
    if (!w.empty() && !each(number, w)) return false;
  }
  return true;
}

template <typename T>
bool number(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool failure(std::string_view text, std::map<std::string, int>& out) {
  size_t colon = text.rfind(':');
  int rc = 0;
  if (colon == std::string_view::npos || !number(text.substr(colon + 1), rc)) return false;
  out[std::string(text.substr(0, colon))] = rc;
  return true;
}

bool processes(std::string_view text, std::vector<FakeProcess>& out) {
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t colon = item.find(':');
    if (colon == std::string_view::npos) return false;
    FakeProcess p;
    if (!number(item.substr(0, colon), p.pid)) return false;
    std::string_view bytes = item.substr(colon + 1);
    if (bytes != "na") {
      uint64_t value = 0;
      if (!number(bytes, value)) return false;
      p.memory_bytes = value;
    }
    out.push_back(p);
  }
  return true;
}

// "key=value" words of a phase line.
bool phaseField(std::string_view word, Phase& phase) {
  size_t eq = word.find('=');
  if (eq == std::string_view::npos) return false;
  std::string_view key = word.substr(0, eq);
  std::string_view value = word.substr(eq + 1);
  if (key == "count") return number(value, phase.count) && phase.count > 0;
  if (key == "util") return number(value, phase.util);
  if (key == "memory_util") return number(value, phase.memory_util);
  if (key == "used") return number(value, phase.used);
  if (key == "power") return number(value, phase.power_mw);
  if (key == "procs") return processes(value, phase.processes);
  if (key == "fail") return failure(value, phase.failures);
  return false;
}

bool deviceLine(const std::vector<std::string_view>& w, DeviceScript& script) {
  if (w[0] == "phase") {
    if (w.size() < 2) return false;
    Phase phase;
    phase.name = std::string(w[1]);
    for (size_t i = 2; i < w.size(); ++i) {
      if (!phaseField(w[i], phase)) return false;
    }
    script.phases.push_back(std::move(phase));
    return true;
  }
  if (w[0] == "fail") {
    int rc = 0;
    if (w.size() != 3 || !number(w[2], rc)) return false;
    script.failures[std::string(w[1])] = rc;
    return true;
  }
  if (w.size() != 2) return false;
  if (w[0] == "uuid")
    script.uuid = std::string(w[1]);
  else if (w[0] == "bus_id")
    script.bus_id = std::string(w[1]);
  else if (w[0] == "memory_total")
    return number(w[1], script.memory_total);
  else if (w[0] == "energy_start")
    return number(w[1], script.energy_start_mj);
  else if (w[0] == "sample_seconds")
    return number(w[1], script.sample_seconds);
  else
    return false;
  return true;
}

}  // namespace

std::optional<DeviceScript> parseDeviceScript(std::string_view text, std::string& error) {
  DeviceScript script;
  bool ok = forEachLine(text, [&](int line, const std::vector<std::string_view>& w) {
    if (deviceLine(w, script)) return true;
    error = std::to_string(line) + ": cannot read '" + std::string(w[0]) + " ...'";
    return false;
  });
  if (!ok) return std::nullopt;
  if (script.phases.empty()) {
    error = "no phase";
    return std::nullopt;
  }
  return script;
}

std::optional<std::map<std::string, int>> parseFaults(std::string_view text, std::string& error) {
  std::map<std::string, int> faults;
  bool ok = forEachLine(text, [&](int line, const std::vector<std::string_view>& w) {
    int rc = 0;
    if (w.size() == 2 && number(w[1], rc)) {
      faults[std::string(w[0])] = rc;
      return true;
    }
    error = std::to_string(line) + ": expected 'CALL RC'";
    return false;
  });
  if (!ok) return std::nullopt;
  return faults;
}

const Phase& phaseAt(const DeviceScript& script, uint64_t step) {
  for (const Phase& phase : script.phases) {
    if (step < phase.count) return phase;
    step -= phase.count;
  }
  return script.phases.back();
}

}  // namespace accel::hw_mock::nvml
