// A stand-in for libnvidia-ml.so.1 for fuzz_nvml_adapter: every NVML call the
// adapter makes answers from the bytes it was fed (accel_fuzz_nvml_feed),
// return code first, then the raw bytes of whatever the call writes, with no
// care for NUL terminators, sane counts or consistent figures. It never
// writes more than the caller's buffer holds, as NVML promises.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "accel/nvml/nvml_abi.h"

namespace {

const uint8_t* g_data = nullptr;
size_t g_size = 0;
size_t g_pos = 0;
char g_error_text[512];

uint8_t byte() { return g_pos < g_size ? g_data[g_pos++] : 0; }

void fill(void* out, size_t n) {
  auto* p = static_cast<uint8_t*>(out);
  for (size_t i = 0; i < n; ++i) p[i] = byte();
}

uint32_t word() {
  uint32_t v = 0;
  fill(&v, sizeof v);
  return v;
}

// Mostly success; otherwise one of the codes NVML answers.
nvml_return_t rc() {
  static constexpr nvml_return_t kCodes[] = {
      kNvmlErrorUninitialized,   kNvmlErrorInvalidArgument, kNvmlErrorNotSupported,
      kNvmlErrorNoPermission,    kNvmlErrorNotFound,        kNvmlErrorInsufficientSize,
      kNvmlErrorDriverNotLoaded, kNvmlErrorGpuIsLost,       kNvmlErrorUnknown};
  const uint8_t b = byte();
  if (b < 200) return kNvmlSuccess;
  return kCodes[b % (sizeof kCodes / sizeof kCodes[0])];
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void accel_fuzz_nvml_feed(const uint8_t* data, size_t size) {
  g_data = data;
  g_size = size;
  g_pos = 0;
}

__attribute__((visibility("default"))) nvml_return_t nvmlInit_v2() {
  return byte() < 240 ? kNvmlSuccess : kNvmlErrorDriverNotLoaded;
}

__attribute__((visibility("default"))) nvml_return_t nvmlShutdown() { return kNvmlSuccess; }

// Unterminated within the first 256 bytes when the input says so; the buffer
// itself always ends in a NUL.
__attribute__((visibility("default"))) const char* nvmlErrorString(nvml_return_t) {
  if (byte() == 0xff) return nullptr;
  fill(g_error_text, sizeof g_error_text - 1);
  g_error_text[sizeof g_error_text - 1] = '\0';
  return g_error_text;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetCount_v2(unsigned int* count) {
  const nvml_return_t r = rc();
  *count = word();
  return r;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetHandleByIndex_v2(
    unsigned int index, nvml_device_t* device) {
  *device = reinterpret_cast<nvml_device_t>(static_cast<uintptr_t>(index) + 1);
  return rc();
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetPciInfo_v3(nvml_device_t,
                                                                             NvmlPciInfo* info) {
  const nvml_return_t r = rc();
  fill(info, sizeof *info);
  return r;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetUUID(nvml_device_t, char* uuid,
                                                                       unsigned int length) {
  const nvml_return_t r = rc();
  fill(uuid, length);
  return r;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetUtilizationRates(
    nvml_device_t, NvmlUtilization* u) {
  const nvml_return_t r = rc();
  fill(u, sizeof *u);
  return r;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetMemoryInfo(nvml_device_t,
                                                                             NvmlMemory* m) {
  const nvml_return_t r = rc();
  fill(m, sizeof *m);
  return r;
}

__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetTotalEnergyConsumption(
    nvml_device_t, unsigned long long* mj) {
  const nvml_return_t r = rc();
  fill(mj, sizeof *mj);
  return r;
}

// Writes at most *count entries; says any count at all.
__attribute__((visibility("default"))) nvml_return_t nvmlDeviceGetComputeRunningProcesses_v3(
    nvml_device_t, unsigned int* count, NvmlProcessInfo* infos) {
  const nvml_return_t r = rc();
  const uint32_t said = word() % 8192;
  if (r == kNvmlSuccess && infos != nullptr) {
    const uint32_t written = std::min<uint32_t>(said, *count);
    for (uint32_t i = 0; i < written; ++i) fill(&infos[i], sizeof infos[i]);
  }
  *count = said;
  return r;
}

}  // extern "C"
