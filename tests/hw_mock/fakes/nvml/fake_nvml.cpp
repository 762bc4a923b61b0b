// The fake NVML: a shared library named libnvidia-ml.so.1 with the calls
// accel-agent makes (accel/nvml/nvml_abi.h), whose devices and readings come
// from scripts in $ACCEL_FAKE_NVML_DIR (tests/hw_mock/README.md, "fakes/nvml").
// The scripts are read at the first nvmlInit_v2; each device moves to its next
// sample when its utilization is read, and the other calls answer from the
// sample reached, so one round of reads is one sample.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include "accel/nvml/nvml_abi.h"
#include "script.h"

namespace {

using accel::hw_mock::nvml::DeviceScript;
using accel::hw_mock::nvml::Phase;

struct Device {
  DeviceScript script;
  uint64_t step = 0;  // the sample the calls answer from
  bool started = false;
  uint64_t energy_mj = 0;
};

struct State {
  std::mutex mu;
  int refs = 0;
  std::vector<std::unique_ptr<Device>> devices;
  std::map<std::string, int> faults;  // library-wide, every device
};

State& state() {
  static State s;
  return s;
}

std::optional<std::string> readFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nvml_return_t load(State& s) {
  const char* dir = std::getenv("ACCEL_FAKE_NVML_DIR");
  if (dir == nullptr || *dir == '\0') return kNvmlErrorDriverNotLoaded;
  std::string error;
  s.faults.clear();
  s.devices.clear();
  if (auto text = readFile(std::string(dir) + "/faults")) {
    auto faults = accel::hw_mock::nvml::parseFaults(*text, error);
    if (!faults) {
      std::fprintf(stderr, "fake nvml: %s/faults:%s\n", dir, error.c_str());
      return kNvmlErrorUnknown;
    }
    s.faults = std::move(*faults);
  }
  if (auto it = s.faults.find("nvmlInit_v2"); it != s.faults.end()) return it->second;
  for (int i = 0;; ++i) {
    std::string path = std::string(dir) + "/gpu" + std::to_string(i);
    auto text = readFile(path);
    if (!text) break;
    auto script = accel::hw_mock::nvml::parseDeviceScript(*text, error);
    if (!script) {
      std::fprintf(stderr, "fake nvml: %s:%s\n", path.c_str(), error.c_str());
      s.devices.clear();
      return kNvmlErrorUnknown;
    }
    auto device = std::make_unique<Device>();
    device->energy_mj = script->energy_start_mj;
    device->script = std::move(*script);
    s.devices.push_back(std::move(device));
  }
  return kNvmlSuccess;
}

// A scripted failure of `call` on `device` (nullptr: a library-wide call).
nvml_return_t scripted(const State& s, const char* call, const Device* device) {
  if (auto it = s.faults.find(call); it != s.faults.end()) return it->second;
  if (device == nullptr) return kNvmlSuccess;
  if (auto it = device->script.failures.find(call); it != device->script.failures.end()) {
    return it->second;
  }
  const Phase& phase = accel::hw_mock::nvml::phaseAt(device->script, device->step);
  if (auto it = phase.failures.find(call); it != phase.failures.end()) return it->second;
  return kNvmlSuccess;
}

Device* find(State& s, nvml_device_t handle) {
  for (auto& d : s.devices) {
    if (reinterpret_cast<nvml_device_t>(d.get()) == handle) return d.get();
  }
  return nullptr;
}

// The common start of a device call: initialized, a known handle, a
// non-null output, no scripted failure.
nvml_return_t enter(State& s, const char* call, nvml_device_t handle, const void* out,
                    Device*& device) {
  if (s.refs == 0) return kNvmlErrorUninitialized;
  device = find(s, handle);
  if (device == nullptr || out == nullptr) return kNvmlErrorInvalidArgument;
  return scripted(s, call, device);
}

void advance(Device& d) {
  if (d.started) {
    ++d.step;
    d.energy_mj +=
        accel::hw_mock::nvml::phaseAt(d.script, d.step).power_mw * d.script.sample_seconds;
  }
  d.started = true;
}

void copyText(char* out, size_t capacity, const std::string& text) {
  std::snprintf(out, capacity, "%s", text.c_str());
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) nvml_return_t nvmlInit_v2() {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (s.refs == 0) {
    nvml_return_t rc = load(s);
    if (rc != kNvmlSuccess) return rc;
  }
  ++s.refs;
  return kNvmlSuccess;
}

__attribute__((visibility("default"))) nvml_return_t nvmlShutdown() {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (s.refs == 0) return kNvmlErrorUninitialized;
  if (--s.refs == 0) s.devices.clear();
  return kNvmlSuccess;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(nvml_return_t rc) {
  switch (rc) {
    case kNvmlSuccess:
      return "Success";
    case kNvmlErrorUninitialized:
      return "Uninitialized";
    case kNvmlErrorInvalidArgument:
      return "Invalid Argument";
    case kNvmlErrorNotSupported:
      return "Not Supported";
    case kNvmlErrorNoPermission:
      return "Insufficient Permissions";
    case kNvmlErrorNotFound:
      return "Not Found";
    case kNvmlErrorInsufficientSize:
      return "Insufficient Size";
    case kNvmlErrorDriverNotLoaded:
      return "Driver Not Loaded";
    case kNvmlErrorGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetCount_v2(unsigned int* count) {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (s.refs == 0) return kNvmlErrorUninitialized;
  if (count == nullptr) return kNvmlErrorInvalidArgument;
  if (nvml_return_t rc = scripted(s, "nvmlDeviceGetCount_v2", nullptr)) return rc;
  *count = static_cast<unsigned>(s.devices.size());
  return kNvmlSuccess;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetHandleByIndex_v2(
    unsigned int index, nvml_device_t* device) {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (s.refs == 0) return kNvmlErrorUninitialized;
  if (device == nullptr || index >= s.devices.size()) return kNvmlErrorInvalidArgument;
  if (nvml_return_t rc = scripted(s, "nvmlDeviceGetHandleByIndex_v2", s.devices[index].get())) {
    return rc;
  }
  *device = reinterpret_cast<nvml_device_t>(s.devices[index].get());
  return kNvmlSuccess;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetPciInfo_v3(nvml_device_t handle,
                                                                             NvmlPciInfo* pci) {
  State& s = state();
  std::lock_guard lock(s.mu);
  Device* d = nullptr;
  if (nvml_return_t rc = enter(s, "nvmlDeviceGetPciInfo_v3", handle, pci, d)) return rc;
  std::memset(pci, 0, sizeof *pci);
  const std::string& id = d->script.bus_id;
  copyText(pci->bus_id, sizeof pci->bus_id, id);
  // The legacy form keeps 4 digits of the domain.
  copyText(pci->bus_id_legacy, sizeof pci->bus_id_legacy, id.size() > 4 ? id.substr(4) : id);
  std::sscanf(id.c_str(), "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
  pci->pci_device_id = 0x233510de;  // 10de:2335, the H200 of the capture
  return kNvmlSuccess;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetUUID(nvml_device_t handle,
                                                                       char* uuid,
                                                                       unsigned int length) {
  State& s = state();
  std::lock_guard lock(s.mu);
  Device* d = nullptr;
  if (nvml_return_t rc = enter(s, "nvmlDeviceGetUUID", handle, uuid, d)) return rc;
  if (length < d->script.uuid.size() + 1) return kNvmlErrorInsufficientSize;
  copyText(uuid, length, d->script.uuid);
  return kNvmlSuccess;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetUtilizationRates(
    nvml_device_t handle, NvmlUtilization* utilization) {
  State& s = state();
  std::lock_guard lock(s.mu);
  Device* d = find(s, handle);
  if (s.refs != 0 && d != nullptr) advance(*d);
  if (nvml_return_t rc = enter(s, "nvmlDeviceGetUtilizationRates", handle, utilization, d)) {
    return rc;
  }
  const Phase& phase = accel::hw_mock::nvml::phaseAt(d->script, d->step);
  utilization->gpu = phase.util;
  utilization->memory = phase.memory_util;
  return kNvmlSuccess;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetMemoryInfo(nvml_device_t handle,
                                                                             NvmlMemory* memory) {
  State& s = state();
  std::lock_guard lock(s.mu);
  Device* d = nullptr;
  if (nvml_return_t rc = enter(s, "nvmlDeviceGetMemoryInfo", handle, memory, d)) return rc;
  const Phase& phase = accel::hw_mock::nvml::phaseAt(d->script, d->step);
  memory->total = d->script.memory_total;
  memory->used = phase.used;
  memory->free = phase.used < memory->total ? memory->total - phase.used : 0;
  return kNvmlSuccess;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetTotalEnergyConsumption(
    nvml_device_t handle, unsigned long long* energy) {
  State& s = state();
  std::lock_guard lock(s.mu);
  Device* d = nullptr;
  if (nvml_return_t rc = enter(s, "nvmlDeviceGetTotalEnergyConsumption", handle, energy, d)) {
    return rc;
  }
  *energy = d->energy_mj;
  return kNvmlSuccess;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetComputeRunningProcesses_v3(
    nvml_device_t handle, unsigned int* count, NvmlProcessInfo* infos) {
  State& s = state();
  std::lock_guard lock(s.mu);
  Device* d = nullptr;
  if (nvml_return_t rc = enter(s, "nvmlDeviceGetComputeRunningProcesses_v3", handle, count, d)) {
    return rc;
  }
  const auto& list = accel::hw_mock::nvml::phaseAt(d->script, d->step).processes;
  if (*count < list.size() || (infos == nullptr && !list.empty())) {
    *count = static_cast<unsigned>(list.size());
    return kNvmlErrorInsufficientSize;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    infos[i].pid = list[i].pid;
    infos[i].used_gpu_memory = list[i].memory_bytes.value_or(kNvmlValueNotAvailable);
    infos[i].gpu_instance_id = 0xFFFFFFFFu;
    infos[i].compute_instance_id = 0xFFFFFFFFu;
  }
  *count = static_cast<unsigned>(list.size());
  return kNvmlSuccess;
}

// Not NVML's: how many nvmlInit_v2 are not yet matched by nvmlShutdown, for
// tests that check the adapter releases the library.
__attribute__((visibility("default"))) int accelFakeNvmlRefs() {
  State& s = state();
  std::lock_guard lock(s.mu);
  return s.refs;
}

}  // extern "C"
