// NVML's answers as the adapter reads them (drivers/telemetry/nvml), from a
// stand-in library that answers from the input (fuzz_nvml_feed.cpp): return
// codes, unterminated strings, device and process counts of any size, figures
// that make no sense. Checked: no crash, leak or undefined behaviour, a
// bounded device list, and what reaches a job's figures stays within what the
// agent relies on (utilization at most 100 %, energy never negative).
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "accel/agent/job_telemetry.h"
#include "accel/nvml/nvml_source.h"

namespace {

using Feed = void (*)(const uint8_t*, size_t);

Feed feed() {
  // Pinned for the whole run, so that every open() finds the same state.
  static Feed fn = [] {
    void* handle = dlopen(ACCEL_FUZZ_NVML_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) std::abort();
    return reinterpret_cast<Feed>(dlsym(handle, "accel_fuzz_nvml_feed"));
  }();
  return fn;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  feed()(data, size);
  auto source = accel::nvml::NvmlSource::open(ACCEL_FUZZ_NVML_LIBRARY);
  if (!source.ok()) return 0;
  const auto devices = (*source)->devices();
  if (devices.size() > accel::nvml::NvmlSource::kMaxDevices) std::abort();
  accel::agent::JobTelemetry job;
  std::vector<accel::agent::DeviceRef> refs;
  for (const auto& d : devices) refs.push_back(accel::agent::DeviceRef::at(d.index));
  job.startJob(1, refs);
  for (int i = 0; i < 3; ++i) {
    auto readings = (*source)->sample();
    if (!readings.ok()) break;
    job.record(*readings, [](uint32_t) -> std::optional<uint32_t> { return 1; });
  }
  (void)(*source)->describe();
  auto figures = job.endJob(1);
  if (!figures) std::abort();
  for (const auto& d : figures->devices) {
    if (d.util_max_pct > 100 || d.util_mean_pct > 100.0 || d.util_mean_pct < 0) std::abort();
    if (d.energy_j && *d.energy_j < 0) std::abort();
  }
  return 0;
}
