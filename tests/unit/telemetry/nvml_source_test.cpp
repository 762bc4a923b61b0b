// The NVML adapter (drivers/telemetry/nvml) driven through the fake NVML of
// tests/hw_mock: the readings of the captured H200, the errors NVML can
// answer with, and a node without the library. Expected figures come from
// the capture (tests/hw_mock/nvml/h200/gpu0), not from the code under test.
#include "accel/nvml/nvml_source.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <string>

#include "accel/telemetry/telemetry_source.h"
#include "temp_dir.h"

namespace accel::nvml {
namespace {

using telemetry::DeviceReading;
using telemetry::normalizePciBusId;

const std::string kH200Dir = std::string(ACCEL_HW_MOCK_DIR) + "/nvml/h200";

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// One device with a single phase; `extra` adds lines.
std::string device(int n, const std::string& extra = "") {
  char bus[32];
  std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x18 + n);
  return "uuid GPU-test-" + std::to_string(n) + "\nbus_id " + bus +
         "\nmemory_total 150754820096\nenergy_start 1000\n" + extra +
         "phase busy util=40 memory_util=5 used=2000 power=100000\n";
}

class NvmlSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Held open for the whole test, so the fake's own counters stay readable
    // after the adapter closes its handle.
    fake_ = dlopen(ACCEL_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(fake_, nullptr) << dlerror();
    refs_ = reinterpret_cast<int (*)()>(dlsym(fake_, "accelFakeNvmlRefs"));
    ASSERT_NE(refs_, nullptr);
    ::setenv("ACCEL_FAKE_NVML_DIR", dir_.path().c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("ACCEL_FAKE_NVML_DIR");
    if (fake_ != nullptr) dlclose(fake_);
  }
  std::unique_ptr<NvmlSource> open() {
    auto source = NvmlSource::open(ACCEL_FAKE_NVML);
    EXPECT_TRUE(source.ok()) << source.error().message();
    return source.ok() ? std::move(*source) : nullptr;
  }

  support::TempDir dir_{"accel-nvml"};
  void* fake_ = nullptr;
  int (*refs_)() = nullptr;
};

TEST_F(NvmlSourceTest, ReadsTheCapturedH200ThroughItsPhases) {
  ::setenv("ACCEL_FAKE_NVML_DIR", kH200Dir.c_str(), 1);
  auto source = open();
  ASSERT_NE(source, nullptr);
  ASSERT_EQ(source->devices().size(), 1u);
  EXPECT_EQ(source->devices()[0].pci_bus_id, "0000:00:06.0");
  EXPECT_EQ(source->devices()[0].uuid, "GPU-4f157061-cbaa-e5dc-acd7-592157a35040");
  EXPECT_EQ(source->describe(), std::string("NVML (") + ACCEL_FAKE_NVML + "), 1 GPU");

  std::vector<DeviceReading> s;
  for (int i = 0; i < 8; ++i) {
    auto readings = source->sample();
    ASSERT_TRUE(readings.ok()) << readings.error().message();
    ASSERT_EQ(readings->size(), 1u);
    s.push_back((*readings)[0]);
  }
  // Idle: 615 MiB of the driver's own, no process, 80.6 W.
  EXPECT_EQ(s[0].utilization_pct, 0u);
  EXPECT_EQ(s[0].memory_used_bytes, 644939776u);
  EXPECT_EQ(s[0].memory_total_bytes, 150754820096u);
  EXPECT_EQ(s[0].energy_mj, 2347924u);
  EXPECT_TRUE(s[0].processes_read);
  EXPECT_TRUE(s[0].processes.empty());
  EXPECT_EQ(s[1].energy_mj, 2347924u + 80587u);
  // The job: 60%, pid 467 with its 22.5 GB, 189 W.
  EXPECT_EQ(s[3].utilization_pct, 60u);
  EXPECT_EQ(s[3].memory_used_bytes, 23141941248u);
  ASSERT_EQ(s[3].processes.size(), 1u);
  EXPECT_EQ(s[3].processes[0].pid, 467u);
  EXPECT_EQ(s[3].processes[0].memory_bytes, 22487760896u);
  EXPECT_EQ(*s[3].energy_mj - *s[2].energy_mj, 189160u);
  // Just after: NVML's average still shows 11%, the memory is back.
  EXPECT_EQ(s[6].utilization_pct, 11u);
  EXPECT_EQ(s[6].memory_used_bytes, 644939776u);
  EXPECT_TRUE(s[6].processes.empty());
  EXPECT_EQ(s[7].utilization_pct, 0u);
  for (const auto& r : s) EXPECT_EQ(r.error, "");
}

TEST_F(NvmlSourceTest, ShutsNvmlDownWhenClosed) {
  writeFile(dir_.file("gpu0"), device(0));
  auto source = open();
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(refs_(), 1);
  source.reset();
  EXPECT_EQ(refs_(), 0);
}

TEST_F(NvmlSourceTest, ListsEveryDeviceInIndexOrder) {
  for (int i = 0; i < 8; ++i) writeFile(dir_.file("gpu" + std::to_string(i)), device(i));
  auto source = open();
  ASSERT_NE(source, nullptr);
  auto readings = source->sample();
  ASSERT_TRUE(readings.ok());
  ASSERT_EQ(readings->size(), 8u);
  EXPECT_EQ((*readings)[7].index, 7u);
  EXPECT_EQ((*readings)[7].pci_bus_id, "0000:1f:00.0");
  EXPECT_EQ((*readings)[7].uuid, "GPU-test-7");
  EXPECT_EQ(source->describe(), std::string("NVML (") + ACCEL_FAKE_NVML + "), 8 GPUs");
}

TEST_F(NvmlSourceTest, ReadsAProcessListLongerThanItsFirstBuffer) {
  std::string procs = "procs=";
  for (int pid = 100; pid < 140; ++pid)
    procs += std::to_string(pid) + ":" + std::to_string(pid) + ",";
  procs += "999:na";
  writeFile(dir_.file("gpu0"),
            "uuid GPU-x\nbus_id 00000000:00:06.0\nmemory_total 10\nphase p " + procs + "\n");
  auto source = open();
  ASSERT_NE(source, nullptr);
  auto readings = source->sample();
  ASSERT_TRUE(readings.ok());
  const auto& list = (*readings)[0].processes;
  ASSERT_EQ(list.size(), 41u);
  EXPECT_EQ(list[39].pid, 139u);
  EXPECT_EQ(list[39].memory_bytes, 139u);
  EXPECT_EQ(list[40].pid, 999u);
  EXPECT_FALSE(list[40].memory_bytes.has_value());  // NVML's "not available"
}

TEST_F(NvmlSourceTest, NoLibraryIsNoNvml) {
  auto source = NvmlSource::open(dir_.file("libnvidia-ml.so.1"));
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(source.error().message().rfind("no NVML: ", 0), 0u) << source.error().message();
}

TEST_F(NvmlSourceTest, ALibraryWithoutTheCallsIsRefused) {
  auto source = NvmlSource::open("libc.so.6");
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(source.error().message(), "libc.so.6 has no nvmlInit_v2");
}

TEST_F(NvmlSourceTest, AFailedInitNamesTheCallAndNvmlsReason) {
  writeFile(dir_.file("gpu0"), device(0));
  writeFile(dir_.file("faults"), "nvmlInit_v2 9\n");
  auto source = NvmlSource::open(ACCEL_FAKE_NVML);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(source.error().message(), "nvmlInit_v2: Driver Not Loaded (rc 9)");
  EXPECT_EQ(refs_(), 0);
}

TEST_F(NvmlSourceTest, AScriptTheFakeCannotReadFailsItsInit) {
  writeFile(dir_.file("gpu0"), "uuid GPU-x\nphase p util=abc\n");
  auto source = NvmlSource::open(ACCEL_FAKE_NVML);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().message(), "nvmlInit_v2: Unknown Error (rc 999)");
}

TEST_F(NvmlSourceTest, NoDeviceIsAnEmptyNode) {
  auto source = open();
  ASSERT_NE(source, nullptr);
  EXPECT_TRUE(source->devices().empty());
  auto readings = source->sample();
  ASSERT_TRUE(readings.ok());
  EXPECT_TRUE(readings->empty());
}

TEST_F(NvmlSourceTest, AFailedDeviceCountFailsTheOpen) {
  writeFile(dir_.file("gpu0"), device(0));
  writeFile(dir_.file("faults"), "nvmlDeviceGetCount_v2 999\n");
  auto source = NvmlSource::open(ACCEL_FAKE_NVML);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().message(), "nvmlDeviceGetCount_v2: Unknown Error (rc 999)");
  EXPECT_EQ(refs_(), 0);  // shut down again
}

TEST_F(NvmlSourceTest, AFailedCallLeavesItsFieldUnsetAndIsNamed) {
  writeFile(dir_.file("gpu0"), device(0, "fail nvmlDeviceGetTotalEnergyConsumption 15\n"));
  writeFile(dir_.file("gpu1"), device(1));
  auto source = open();
  ASSERT_NE(source, nullptr);
  auto readings = source->sample();
  ASSERT_TRUE(readings.ok());
  const DeviceReading& lost = (*readings)[0];
  EXPECT_FALSE(lost.energy_mj.has_value());
  EXPECT_EQ(lost.utilization_pct, 40u);
  EXPECT_EQ(lost.memory_used_bytes, 2000u);
  EXPECT_EQ(lost.error, "nvmlDeviceGetTotalEnergyConsumption: GPU is lost (rc 15)");
  EXPECT_EQ((*readings)[1].energy_mj, 1000u);
  EXPECT_EQ((*readings)[1].error, "");
}

TEST_F(NvmlSourceTest, AnUnsupportedFieldIsUnsetWithoutError) {
  writeFile(dir_.file("gpu0"), device(0,
                                      "fail nvmlDeviceGetTotalEnergyConsumption 3\n"
                                      "fail nvmlDeviceGetComputeRunningProcesses_v3 3\n"));
  auto source = open();
  ASSERT_NE(source, nullptr);
  auto readings = source->sample();
  ASSERT_TRUE(readings.ok());
  EXPECT_FALSE((*readings)[0].energy_mj.has_value());
  EXPECT_FALSE((*readings)[0].processes_read);
  EXPECT_EQ((*readings)[0].error, "");
}

TEST_F(NvmlSourceTest, ABadBusIdIsNamedAndTheDeviceKept) {
  writeFile(dir_.file("gpu0"), "uuid GPU-x\nbus_id 0:6\nphase p util=1\n");
  auto source = open();
  ASSERT_NE(source, nullptr);
  ASSERT_EQ(source->devices().size(), 1u);
  EXPECT_EQ(source->devices()[0].pci_bus_id, "");
  EXPECT_EQ(source->devices()[0].error, "nvmlDeviceGetPciInfo_v3: not a PCI bus id: '0:6'");
}

// NVML's strings reach events, summaries and terminals: bytes that are not
// printable (here a terminal escape) are not passed on, and the device stays.
TEST_F(NvmlSourceTest, AnUnprintableUuidOrBusIdIsNotPassedOn) {
  writeFile(dir_.file("gpu0"),
            "uuid GPU-\x1b]0;owned\x07\nbus_id 00000000:18:00.0\nphase p util=1\n");
  writeFile(dir_.file("gpu1"), "uuid GPU-ok\nbus_id 0\x1b[2J\nphase p util=1\n");
  auto source = open();
  ASSERT_NE(source, nullptr);
  ASSERT_EQ(source->devices().size(), 2u);
  EXPECT_EQ(source->devices()[0].uuid, "");
  EXPECT_EQ(source->devices()[0].pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(source->devices()[0].error, "nvmlDeviceGetUUID: not a UUID");
  EXPECT_EQ(source->devices()[1].uuid, "GPU-ok");
  EXPECT_EQ(source->devices()[1].error, "nvmlDeviceGetPciInfo_v3: not a PCI bus id");
}

// A device count no node has (a broken or hostile library) is refused
// rather than walked.
TEST_F(NvmlSourceTest, MoreDevicesThanANodeHoldsFailsTheOpen) {
  for (unsigned i = 0; i <= NvmlSource::kMaxDevices; ++i)
    writeFile(dir_.file("gpu" + std::to_string(i)), device(static_cast<int>(i % 200)));
  auto source = NvmlSource::open(ACCEL_FAKE_NVML);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().message(),
            "nvmlDeviceGetCount_v2: 65 devices, more than the 64 a node can hold");
  EXPECT_EQ(refs_(), 0);
}

TEST_F(NvmlSourceTest, NvmlNoLongerInitializedFailsTheSample) {
  writeFile(dir_.file("gpu0"), device(0) + "phase gone fail=nvmlDeviceGetUtilizationRates:1\n");
  auto source = open();
  ASSERT_NE(source, nullptr);
  ASSERT_TRUE(source->sample().ok());
  auto second = source->sample();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code(), ErrorCode::kUnavailable);
  EXPECT_NE(second.error().message().find("nvmlDeviceGetUtilizationRates: Uninitialized"),
            std::string::npos)
      << second.error().message();
}

TEST(PciBusId, NormalizesNvmlsAndTheKernelsForms) {
  EXPECT_EQ(normalizePciBusId("00000000:00:06.0"), "0000:00:06.0");
  EXPECT_EQ(normalizePciBusId("00000000:C1:00.0"), "0000:c1:00.0");
  EXPECT_EQ(normalizePciBusId("0000:c1:00.0"), "0000:c1:00.0");
  EXPECT_EQ(normalizePciBusId("0002:04:1f.7"), "0002:04:1f.7");
}

TEST(PciBusId, RefusesWhatIsNotOne) {
  EXPECT_EQ(normalizePciBusId(""), std::nullopt);
  EXPECT_EQ(normalizePciBusId("00000000:00:06"), std::nullopt);     // truncated
  EXPECT_EQ(normalizePciBusId("00000000:00:06.0x"), std::nullopt);  // trailing
  EXPECT_EQ(normalizePciBusId("000:00:06.0"), std::nullopt);        // short domain
  EXPECT_EQ(normalizePciBusId("00010000:00:06.0"), std::nullopt);   // domain > 16 bits
  EXPECT_EQ(normalizePciBusId("0000:00:20.0"), std::nullopt);       // device > 31
  EXPECT_EQ(normalizePciBusId("0000:00:06.8"), std::nullopt);       // function > 7
  EXPECT_EQ(normalizePciBusId("GPU-4f157061"), std::nullopt);       // garbage
}

}  // namespace
}  // namespace accel::nvml
