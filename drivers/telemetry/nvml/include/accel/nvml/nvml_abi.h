#pragma once
// The part of NVML's C interface that accel-agent uses, declared here so that
// nothing of NVIDIA's is needed to build: the library is loaded at run time.
//
// Names, argument lists, return codes and struct layouts follow NVIDIA's
// public nvml.h (NVML API version 12; the copy checked was the one published
// in github.com/XuehaiPan/nvml-dev, commit 4b26e7cc4f3b, of September 2024).
// The symbols are the versioned ones that header maps the plain names to
// (nvmlInit -> nvmlInit_v2, nvmlDeviceGetPciInfo -> nvmlDeviceGetPciInfo_v3,
// nvmlDeviceGetComputeRunningProcesses -> _v3, ...). The static_asserts below
// pin the layouts to the sizes and offsets of that header on x86-64 and
// aarch64. The fake NVML of tests/hw_mock implements these same declarations.
#include <cstddef>

extern "C" {

// nvmlReturn_t: an int-sized enum in C. Only the codes the agent acts on.
using nvml_return_t = int;
inline constexpr nvml_return_t kNvmlSuccess = 0;
inline constexpr nvml_return_t kNvmlErrorUninitialized = 1;
inline constexpr nvml_return_t kNvmlErrorInvalidArgument = 2;
inline constexpr nvml_return_t kNvmlErrorNotSupported = 3;
inline constexpr nvml_return_t kNvmlErrorNoPermission = 4;
inline constexpr nvml_return_t kNvmlErrorNotFound = 6;
inline constexpr nvml_return_t kNvmlErrorInsufficientSize = 7;
inline constexpr nvml_return_t kNvmlErrorDriverNotLoaded = 9;
inline constexpr nvml_return_t kNvmlErrorGpuIsLost = 15;
inline constexpr nvml_return_t kNvmlErrorUnknown = 999;

// nvmlDevice_t: an opaque handle.
struct NvmlDeviceOpaque;
using nvml_device_t = NvmlDeviceOpaque*;

// Buffer sizes the header gives for the PCI bus id (v3 struct) and the UUID.
inline constexpr unsigned kNvmlPciBusIdLegacySize = 16;
inline constexpr unsigned kNvmlPciBusIdSize = 32;
inline constexpr unsigned kNvmlUuidSize = 96;

// nvmlPciInfo_t (filled by nvmlDeviceGetPciInfo_v3).
struct NvmlPciInfo {
  char bus_id_legacy[kNvmlPciBusIdLegacySize];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;  // device id << 16 | vendor id
  unsigned int pci_subsystem_id;
  char bus_id[kNvmlPciBusIdSize];  // "00000000:00:06.0", NUL-terminated
};

// nvmlUtilization_t: percent of the last sample period.
struct NvmlUtilization {
  unsigned int gpu;     // a kernel was running
  unsigned int memory;  // device memory was read or written
};

// nvmlMemory_t, in bytes. The order is total, free, used.
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// nvmlProcessInfo_t (the v2 struct, which the _v3 process calls take).
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;  // kNvmlValueNotAvailable when not reported
  unsigned int gpu_instance_id;        // MIG only; 0xFFFFFFFF otherwise
  unsigned int compute_instance_id;
};
inline constexpr unsigned long long kNvmlValueNotAvailable = ~0ULL;  // (-1) in the header

static_assert(sizeof(NvmlPciInfo) == 68 && offsetof(NvmlPciInfo, bus_id) == 36);
static_assert(sizeof(NvmlUtilization) == 8);
static_assert(sizeof(NvmlMemory) == 24 && offsetof(NvmlMemory, used) == 16);
static_assert(sizeof(NvmlProcessInfo) == 24 && offsetof(NvmlProcessInfo, used_gpu_memory) == 8);

// The calls, as function pointer types (the adapter resolves them with dlsym).
using NvmlInitFn = nvml_return_t (*)();                         // nvmlInit_v2
using NvmlShutdownFn = nvml_return_t (*)();                     // nvmlShutdown
using NvmlErrorStringFn = const char* (*)(nvml_return_t);       // nvmlErrorString
using NvmlDeviceGetCountFn = nvml_return_t (*)(unsigned int*);  // nvmlDeviceGetCount_v2
using NvmlDeviceGetHandleByIndexFn = nvml_return_t (*)(unsigned int, nvml_device_t*);  // _v2
using NvmlDeviceGetPciInfoFn = nvml_return_t (*)(nvml_device_t, NvmlPciInfo*);         // _v3
using NvmlDeviceGetUuidFn = nvml_return_t (*)(nvml_device_t, char*, unsigned int);
using NvmlDeviceGetUtilizationRatesFn = nvml_return_t (*)(nvml_device_t, NvmlUtilization*);
using NvmlDeviceGetMemoryInfoFn = nvml_return_t (*)(nvml_device_t, NvmlMemory*);
using NvmlDeviceGetTotalEnergyConsumptionFn = nvml_return_t (*)(nvml_device_t,
                                                                unsigned long long*);  // mJ
using NvmlDeviceGetComputeRunningProcessesFn = nvml_return_t (*)(nvml_device_t, unsigned int*,
                                                                 NvmlProcessInfo*);  // _v3
}
