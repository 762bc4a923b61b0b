#pragma once
// NVML, loaded with dlopen at run time and initialized: one call of ours per
// NVML call used, each answering in our Result. Not thread-safe in itself
// (NVML is, but the agent reads it from one thread only).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/result.h"
#include "accel/nvml/nvml_abi.h"

namespace accel::nvml {

// What the agent loads unless NvmlLibrary says otherwise: the name NVIDIA's
// driver installs, found by the dynamic loader.
inline constexpr std::string_view kDefaultNvmlLibrary = "libnvidia-ml.so.1";

// The message of a missing library starts with this, so that callers (and
// `accelctl status`) can say "telemetry: no NVML".
inline constexpr std::string_view kNoNvml = "no NVML";

class NvmlLibrary {
 public:
  // Loads `library` (a name the loader searches for, or a path), resolves
  // every call this class makes and runs nvmlInit_v2. Errors:
  //   kNotFound     the library cannot be loaded ("no NVML: <loader's reason>");
  //   kUnsupported  it lacks one of the calls (named);
  //   kUnavailable  nvmlInit_v2 failed ("nvmlInit_v2: <nvmlErrorString> (rc N)").
  static Result<std::unique_ptr<NvmlLibrary>> open(const std::string& library);
  ~NvmlLibrary();  // nvmlShutdown, then dlclose
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // Each call below fails with the NVML call's name and error string:
  // kUnsupported for NVML_ERROR_NOT_SUPPORTED, kPermissionDenied for
  // NO_PERMISSION, kUnavailable for the rest.
  Result<unsigned> deviceCount();
  Result<nvml_device_t> device(unsigned index);
  Result<std::string> pciBusId(nvml_device_t device);  // as NVML writes it
  Result<std::string> uuid(nvml_device_t device);
  Result<NvmlUtilization> utilization(nvml_device_t device);
  Result<NvmlMemory> memory(nvml_device_t device);
  Result<uint64_t> totalEnergyMj(nvml_device_t device);
  // The compute processes on the device, however many there are (up to
  // kMaxProcesses: a longer list is cut there).
  Result<std::vector<NvmlProcessInfo>> computeProcesses(nvml_device_t device);

  static constexpr unsigned kMaxProcesses = 4096;

  // The return code of the last NVML call made through this object.
  nvml_return_t lastReturnCode() const { return last_rc_; }

  // The library's text for a return code ("Unknown Error" style).
  std::string errorString(nvml_return_t rc) const;
  // kUnsupported / kPermissionDenied / kUnavailable with "CALL: TEXT (rc N)".
  Error callError(std::string_view call, nvml_return_t rc) const;

 private:
  struct Calls;
  NvmlLibrary(void* handle, std::unique_ptr<Calls> calls);
  void* handle_;
  std::unique_ptr<Calls> calls_;
  nvml_return_t last_rc_ = kNvmlSuccess;
};

}  // namespace accel::nvml
