#include "accel/nvml/nvml_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>

namespace accel::nvml {

struct NvmlLibrary::Calls {
  NvmlInitFn init = nullptr;
  NvmlShutdownFn shutdown = nullptr;
  NvmlErrorStringFn error_string = nullptr;
  NvmlDeviceGetCountFn count = nullptr;
  NvmlDeviceGetHandleByIndexFn handle = nullptr;
  NvmlDeviceGetPciInfoFn pci = nullptr;
  NvmlDeviceGetUuidFn uuid = nullptr;
  NvmlDeviceGetUtilizationRatesFn utilization = nullptr;
  NvmlDeviceGetMemoryInfoFn memory = nullptr;
  NvmlDeviceGetTotalEnergyConsumptionFn energy = nullptr;
  NvmlDeviceGetComputeRunningProcessesFn processes = nullptr;
};

namespace {

// Resolves `symbol` into `out`; the first one missing is kept for the message.
template <typename Fn>
bool bind(void* handle, const char* symbol, Fn& out, std::string& missing) {
  out = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (out == nullptr && missing.empty()) missing = symbol;
  return out != nullptr;
}

std::string boundedString(const char* text, size_t capacity) {
  return std::string(text, strnlen(text, capacity));
}

}  // namespace

NvmlLibrary::NvmlLibrary(void* handle, std::unique_ptr<Calls> calls)
    : handle_(handle), calls_(std::move(calls)) {}

NvmlLibrary::~NvmlLibrary() {
  (void)calls_->shutdown();
  dlclose(handle_);
}

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::open(const std::string& library) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Error(ErrorCode::kNotFound,
                 std::string(kNoNvml) + ": " + (why != nullptr ? why : library.c_str()));
  }
  auto calls = std::make_unique<Calls>();
  std::string missing;
  bind(handle, "nvmlInit_v2", calls->init, missing);
  bind(handle, "nvmlShutdown", calls->shutdown, missing);
  bind(handle, "nvmlErrorString", calls->error_string, missing);
  bind(handle, "nvmlDeviceGetCount_v2", calls->count, missing);
  bind(handle, "nvmlDeviceGetHandleByIndex_v2", calls->handle, missing);
  bind(handle, "nvmlDeviceGetPciInfo_v3", calls->pci, missing);
  bind(handle, "nvmlDeviceGetUUID", calls->uuid, missing);
  bind(handle, "nvmlDeviceGetUtilizationRates", calls->utilization, missing);
  bind(handle, "nvmlDeviceGetMemoryInfo", calls->memory, missing);
  bind(handle, "nvmlDeviceGetTotalEnergyConsumption", calls->energy, missing);
  bind(handle, "nvmlDeviceGetComputeRunningProcesses_v3", calls->processes, missing);
  if (!missing.empty()) {
    dlclose(handle);
    return Error(ErrorCode::kUnsupported, library + " has no " + missing);
  }
  nvml_return_t rc = calls->init();
  if (rc != kNvmlSuccess) {
    const char* text = calls->error_string(rc);
    dlclose(handle);
    return Error(ErrorCode::kUnavailable,
                 "nvmlInit_v2: " + std::string(text != nullptr ? text : "?") + " (rc " +
                     std::to_string(rc) + ")");
  }
  return std::unique_ptr<NvmlLibrary>(new NvmlLibrary(handle, std::move(calls)));
}

std::string NvmlLibrary::errorString(nvml_return_t rc) const {
  const char* text = calls_->error_string(rc);
  return text != nullptr ? boundedString(text, 256) : "unknown error";
}

Error NvmlLibrary::callError(std::string_view call, nvml_return_t rc) const {
  ErrorCode code = ErrorCode::kUnavailable;
  if (rc == kNvmlErrorNotSupported) code = ErrorCode::kUnsupported;
  if (rc == kNvmlErrorNoPermission) code = ErrorCode::kPermissionDenied;
  return Error(code,
               std::string(call) + ": " + errorString(rc) + " (rc " + std::to_string(rc) + ")");
}

Result<unsigned> NvmlLibrary::deviceCount() {
  unsigned count = 0;
  nvml_return_t rc = calls_->count(&count);
  last_rc_ = rc;
  if (rc != kNvmlSuccess) return callError("nvmlDeviceGetCount_v2", rc);
  return count;
}

Result<nvml_device_t> NvmlLibrary::device(unsigned index) {
  nvml_device_t device = nullptr;
  nvml_return_t rc = calls_->handle(index, &device);
  last_rc_ = rc;
  if (rc != kNvmlSuccess) return callError("nvmlDeviceGetHandleByIndex_v2", rc);
  return device;
}

Result<std::string> NvmlLibrary::pciBusId(nvml_device_t device) {
  NvmlPciInfo info{};
  nvml_return_t rc = calls_->pci(device, &info);
  last_rc_ = rc;
  if (rc != kNvmlSuccess) return callError("nvmlDeviceGetPciInfo_v3", rc);
  return boundedString(info.bus_id, sizeof info.bus_id);
}

Result<std::string> NvmlLibrary::uuid(nvml_device_t device) {
  char text[kNvmlUuidSize] = {};
  nvml_return_t rc = calls_->uuid(device, text, sizeof text);
  last_rc_ = rc;
  if (rc != kNvmlSuccess) return callError("nvmlDeviceGetUUID", rc);
  return boundedString(text, sizeof text);
}

Result<NvmlUtilization> NvmlLibrary::utilization(nvml_device_t device) {
  NvmlUtilization value{};
  nvml_return_t rc = calls_->utilization(device, &value);
  last_rc_ = rc;
  if (rc != kNvmlSuccess) return callError("nvmlDeviceGetUtilizationRates", rc);
  return value;
}

Result<NvmlMemory> NvmlLibrary::memory(nvml_device_t device) {
  NvmlMemory value{};
  nvml_return_t rc = calls_->memory(device, &value);
  last_rc_ = rc;
  if (rc != kNvmlSuccess) return callError("nvmlDeviceGetMemoryInfo", rc);
  return value;
}

Result<uint64_t> NvmlLibrary::totalEnergyMj(nvml_device_t device) {
  unsigned long long value = 0;
  nvml_return_t rc = calls_->energy(device, &value);
  last_rc_ = rc;
  if (rc != kNvmlSuccess) return callError("nvmlDeviceGetTotalEnergyConsumption", rc);
  return static_cast<uint64_t>(value);
}

Result<std::vector<NvmlProcessInfo>> NvmlLibrary::computeProcesses(nvml_device_t device) {
  // NVML answers INSUFFICIENT_SIZE with the count it needs; the list may grow
  // between two calls, so try a few times with room to spare.
  std::vector<NvmlProcessInfo> list(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(list.size());
    nvml_return_t rc = calls_->processes(device, &count, list.data());
    last_rc_ = rc;
    if (rc == kNvmlSuccess) {
      list.resize(std::min<size_t>(count, list.size()));
      return list;
    }
    if (rc != kNvmlErrorInsufficientSize || list.size() >= kMaxProcesses) {
      return callError("nvmlDeviceGetComputeRunningProcesses_v3", rc);
    }
    list.resize(std::min<size_t>(std::max<size_t>(count + 8, list.size() * 2), kMaxProcesses));
  }
  return callError("nvmlDeviceGetComputeRunningProcesses_v3", kNvmlErrorInsufficientSize);
}

}  // namespace accel::nvml
