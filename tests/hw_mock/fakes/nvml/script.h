#pragma once
// The fake NVML's script of one device: who it is, and its readings as a
// list of phases (idle, busy, after, ...), each lasting some samples. The
// format is in tests/hw_mock/README.md ("fakes/nvml"). Pure: parsed from text.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::hw_mock::nvml {

struct FakeProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> memory_bytes;  // unset: "na", NVML's value-not-available
};

struct Phase {
  std::string name;
  uint64_t count = 1;  // samples; the last phase lasts for ever
  uint32_t util = 0;
  uint32_t memory_util = 0;
  uint64_t used = 0;      // bytes
  uint64_t power_mw = 0;  // energy grows by power x sample_seconds per sample
  std::vector<FakeProcess> processes;
  std::map<std::string, int> failures;  // NVML call name -> return code, this phase only
};

struct DeviceScript {
  std::string uuid;
  std::string bus_id;  // as NVML writes it: "00000000:00:06.0"
  uint64_t memory_total = 0;
  uint64_t energy_start_mj = 0;
  uint64_t sample_seconds = 1;
  std::map<std::string, int> failures;  // every sample
  std::vector<Phase> phases;
};

// Parses one device's script; on a bad line, unset with `error` set to
// "LINE: why".
std::optional<DeviceScript> parseDeviceScript(std::string_view text, std::string& error);

// Parses the library-wide faults file: "CALL RC" per line. Unset on error.
std::optional<std::map<std::string, int>> parseFaults(std::string_view text, std::string& error);

// The phase in force at sample `step` (0-based).
const Phase& phaseAt(const DeviceScript& script, uint64_t step);

}  // namespace accel::hw_mock::nvml
