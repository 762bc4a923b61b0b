// Per-job figures from literal readings (JobTelemetry), and the cgroup
// parser that ties a process to its job.
#include "accel/agent/job_telemetry.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "accel/agent/cgroup_job.h"
#include "temp_dir.h"

namespace accel::agent {
namespace {

using telemetry::DeviceReading;
using telemetry::ProcessUsage;

DeviceReading reading(uint32_t index, uint32_t util, uint64_t used, uint64_t energy_mj,
                      std::vector<ProcessUsage> processes = {}) {
  DeviceReading r;
  r.index = index;
  r.pci_bus_id =
      "0000:" + std::string(index < 10 ? "1" : "2") + std::to_string(index % 10) + ":00.0";
  r.uuid = "GPU-" + std::to_string(index);
  r.utilization_pct = util;
  r.memory_used_bytes = used;
  r.memory_total_bytes = 1000;
  r.energy_mj = energy_mj;
  r.processes = std::move(processes);
  r.processes_read = true;
  return r;
}

ProcessUsage proc(uint32_t pid, std::optional<uint64_t> bytes = std::nullopt) {
  ProcessUsage p;
  p.pid = pid;
  p.memory_bytes = bytes;
  return p;
}

JobOfPid owners(std::map<uint32_t, uint32_t> table) {
  return [table](uint32_t pid) -> std::optional<uint32_t> {
    auto it = table.find(pid);
    if (it == table.end()) return std::nullopt;
    return it->second;
  };
}

TEST(JobTelemetry, MeanMaxMemoryEnergyAndCountOfEachDevice) {
  JobTelemetry t;
  // The job holds GPU 1 by its bus id (NVML's form) and GPU 0 by index.
  t.startJob(42, {DeviceRef::bus("00000000:11:00.0"), DeviceRef::at(0)});
  t.record({reading(0, 10, 100, 5'000), reading(1, 0, 50, 20'000)}, {});
  t.record({reading(0, 30, 400, 6'500), reading(1, 90, 70, 21'000)}, {});
  t.record({reading(0, 50, 200, 9'000), reading(1, 60, 60, 22'000)}, {});
  auto f = t.endJob(42);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->job_id, 42u);
  EXPECT_EQ(f->samples, 3u);
  ASSERT_EQ(f->devices.size(), 2u);
  const DeviceFigures& gpu1 = f->devices[0];  // the order given at start
  EXPECT_TRUE(gpu1.found);
  EXPECT_EQ(gpu1.index, 1u);
  EXPECT_EQ(gpu1.pci_bus_id, "0000:11:00.0");
  EXPECT_EQ(gpu1.uuid, "GPU-1");
  EXPECT_EQ(gpu1.samples, 3u);
  EXPECT_DOUBLE_EQ(gpu1.util_mean_pct, 50.0);
  EXPECT_EQ(gpu1.util_max_pct, 90u);
  EXPECT_EQ(gpu1.memory_used_max_bytes, 70u);
  EXPECT_EQ(gpu1.energy_j, 2.0);
  const DeviceFigures& gpu0 = f->devices[1];
  EXPECT_DOUBLE_EQ(gpu0.util_mean_pct, 30.0);
  EXPECT_EQ(gpu0.util_max_pct, 50u);
  EXPECT_EQ(gpu0.memory_used_max_bytes, 400u);
  EXPECT_EQ(gpu0.energy_j, 4.0);
  EXPECT_FALSE(t.endJob(42).has_value());  // ended once
}

// Idle: the latest samples in a row in which every device of the job read 0%.
// A sample that read no device of the job leaves the count; a busy one ends it.
// The latest readings are kept beside the maxima.
TEST(JobTelemetry, IdleSamplesCountTheLatestRunOfZeroUtilization) {
  JobTelemetry t;
  t.startJob(42, {DeviceRef::at(0), DeviceRef::at(1)});
  t.startJob(43, {DeviceRef::at(2)});
  t.record({reading(0, 0, 100, 1), reading(1, 0, 100, 1), reading(2, 5, 10, 1)}, {});
  t.record({reading(0, 0, 300, 2), reading(1, 0, 100, 2), reading(2, 0, 10, 2)}, {});
  EXPECT_EQ(t.snapshot(42)->idle_samples, 2u);
  EXPECT_EQ(t.snapshot(43)->idle_samples, 1u);
  DeviceReading unread = reading(0, 0, 0, 3);
  unread.utilization_pct.reset();
  t.record({unread}, {});
  EXPECT_EQ(t.snapshot(42)->idle_samples, 2u) << "nothing read: the count stays";
  t.record({reading(0, 0, 200, 4), reading(1, 1, 100, 4)}, {});
  auto busy = t.snapshot(42);
  EXPECT_EQ(busy->idle_samples, 0u) << "one device busy: not idle";
  EXPECT_EQ(busy->devices[0].util_last_pct, std::optional<uint32_t>(0));
  EXPECT_EQ(busy->devices[0].memory_used_last_bytes, std::optional<uint64_t>(200));
  EXPECT_EQ(busy->devices[0].memory_used_max_bytes, std::optional<uint64_t>(300));
  EXPECT_EQ(busy->devices[1].util_last_pct, std::optional<uint32_t>(1));
  auto all = t.snapshots();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].job_id, 42u);
  EXPECT_EQ(all[1].job_id, 43u);
}

TEST(JobTelemetry, ADeviceHeldByNoJobCountsForNone) {
  JobTelemetry t;
  t.startJob(7, {DeviceRef::at(0)});
  t.record({reading(0, 20, 10, 100), reading(1, 99, 999, 900, {proc(5, 9)})}, owners({{5, 7}}));
  auto f = t.snapshot(7);
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->devices.size(), 1u);
  EXPECT_EQ(f->devices[0].util_max_pct, 20u);
  EXPECT_EQ(f->devices[0].memory_used_max_bytes, 10u);
  // Its process on a device it does not hold is not read at all.
  EXPECT_TRUE(f->processes.empty());
  EXPECT_TRUE(t.takeStrays().empty());
}

TEST(JobTelemetry, EnergyNeedsTwoReadingsAndSkipsACounterThatWentBack) {
  JobTelemetry t;
  t.startJob(1, {DeviceRef::at(0)});
  t.record({reading(0, 0, 0, 50'000)}, {});
  EXPECT_FALSE(t.snapshot(1)->devices[0].energy_j.has_value());
  t.record({reading(0, 0, 0, 53'000)}, {});  // +3 J
  t.record({reading(0, 0, 0, 1'000)}, {});   // reset: that interval is lost
  t.record({reading(0, 0, 0, 2'500)}, {});   // +1.5 J
  EXPECT_EQ(t.snapshot(1)->devices[0].energy_j, 4.5);
}

TEST(JobTelemetry, AFieldNotReadIsNotCountedAsZero) {
  JobTelemetry t;
  t.startJob(1, {DeviceRef::at(0)});
  DeviceReading blank = reading(0, 0, 0, 0);
  blank.utilization_pct.reset();
  blank.memory_used_bytes.reset();
  blank.energy_mj.reset();
  t.record({reading(0, 80, 5, 1'000)}, {});
  t.record({blank}, {});
  auto f = t.snapshot(1);
  EXPECT_EQ(f->samples, 2u);
  EXPECT_EQ(f->devices[0].samples, 1u);
  EXPECT_DOUBLE_EQ(f->devices[0].util_mean_pct, 80.0);
}

TEST(JobTelemetry, AJobNeverSampledHasNoFigures) {
  JobTelemetry t;
  t.startJob(3, {DeviceRef::bus("0000:c1:00.0")});
  auto f = t.endJob(3);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->samples, 0u);
  EXPECT_FALSE(f->devices[0].found);
  EXPECT_EQ(f->devices[0].pci_bus_id, "0000:c1:00.0");
  EXPECT_FALSE(f->devices[0].memory_used_max_bytes.has_value());
  EXPECT_FALSE(f->devices[0].energy_j.has_value());
}

TEST(JobTelemetry, ProcessesGoToTheirJobWithTheirMostMemory) {
  JobTelemetry t;
  t.startJob(10, {DeviceRef::at(0)});
  t.startJob(11, {DeviceRef::at(1)});
  auto who = owners({{100, 10}, {101, 10}, {200, 11}});
  t.record({reading(0, 1, 1, 1, {proc(100, 500), proc(101)}), reading(1, 1, 1, 1, {proc(200, 7)})},
           who);
  t.record({reading(0, 1, 1, 1, {proc(100, 300), proc(101)}), reading(1, 1, 1, 1, {})}, who);
  auto f = t.endJob(10);
  ASSERT_EQ(f->processes.size(), 2u);
  EXPECT_EQ(f->processes[0].pid, 100u);
  EXPECT_EQ(f->processes[0].device_index, 0u);
  EXPECT_EQ(f->processes[0].memory_max_bytes, 500u);
  EXPECT_EQ(f->processes[1].pid, 101u);
  EXPECT_FALSE(f->processes[1].memory_max_bytes.has_value());
  auto g = t.endJob(11);
  ASSERT_EQ(g->processes.size(), 1u);
  EXPECT_EQ(g->processes[0].memory_max_bytes, 7u);
  EXPECT_TRUE(t.takeStrays().empty());
}

TEST(JobTelemetry, AProcessOfNoJobIsReportedOnceWhileItStays) {
  JobTelemetry t;
  t.startJob(10, {DeviceRef::at(0)});
  auto who = owners({});
  auto with_stray = [] { return reading(0, 1, 1, 1, {proc(666, 42)}); };
  t.record({with_stray()}, who);
  auto strays = t.takeStrays();
  ASSERT_EQ(strays.size(), 1u);
  EXPECT_EQ(strays[0].pid, 666u);
  EXPECT_EQ(strays[0].device_index, 0u);
  EXPECT_EQ(strays[0].memory_bytes, 42u);
  EXPECT_EQ(strays[0].jobs_on_device, std::vector<uint32_t>{10});
  t.record({with_stray()}, who);
  t.record({with_stray()}, who);
  EXPECT_TRUE(t.takeStrays().empty());
  EXPECT_TRUE(t.snapshot(10)->processes.empty());
  // Gone, then a process with its pid again: a new one, told again.
  t.record({reading(0, 1, 1, 1)}, who);
  t.record({with_stray()}, who);
  EXPECT_EQ(t.takeStrays().size(), 1u);
}

TEST(JobTelemetry, StartingAJobTwiceKeepsItsFigures) {
  JobTelemetry t;
  t.startJob(5, {DeviceRef::at(0)});
  t.record({reading(0, 70, 1, 1)}, {});
  t.startJob(5, {DeviceRef::at(1)});
  auto f = t.snapshot(5);
  ASSERT_EQ(f->devices.size(), 1u);
  EXPECT_EQ(f->devices[0].util_max_pct, 70u);
}

TEST(CgroupJob, ReadsTheJobOfSlurmsCgroupPaths) {
  // cgroup v2, Slurm 22.05 and later.
  EXPECT_EQ(jobIdFromCgroup("0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n"),
            4242u);
  // cgroup v1, with the freezer and memory hierarchies.
  EXPECT_EQ(jobIdFromCgroup("12:memory:/slurm/uid_1000/job_17/step_batch\n"
                            "5:freezer:/slurm/uid_1000/job_17/step_batch\n"),
            17u);
}

TEST(CgroupJob, FindsNoJobWhereThereIsNone) {
  // The process of the capture: a container's cgroup, no Slurm.
  EXPECT_EQ(jobIdFromCgroup("0::/process_api/f34d0b683e32dfc2d827608ba0832c91\n"), std::nullopt);
  EXPECT_EQ(jobIdFromCgroup("0::/user.slice/user-1000.slice/session-3.scope\n"), std::nullopt);
  EXPECT_EQ(jobIdFromCgroup("0::/slurm/job_/step_0\n"), std::nullopt);
  EXPECT_EQ(jobIdFromCgroup("0::/slurm/job_12x/step_0\n"), std::nullopt);
  EXPECT_EQ(jobIdFromCgroup("0::/slurm/job_99999999999/step_0\n"), std::nullopt);  // > 32 bits
  EXPECT_EQ(jobIdFromCgroup("0::/slurm/myjob_12\n"), std::nullopt);
  EXPECT_EQ(jobIdFromCgroup("job_12"), std::nullopt);  // not a cgroup line
  EXPECT_EQ(jobIdFromCgroup(""), std::nullopt);
  EXPECT_EQ(jobIdFromCgroup("\x01\xff::::"), std::nullopt);
}

TEST(CgroupJob, ReadsAPidsCgroupUnderAProcRoot) {
  support::TempDir proc("accel-proc");
  std::filesystem::create_directories(proc.file("467"));
  std::ofstream(proc.file("467/cgroup")) << "0::/system.slice/slurmstepd.scope/job_9/step_0\n";
  EXPECT_EQ(jobOfPid(467, proc.path()), 9u);
  EXPECT_EQ(jobOfPid(468, proc.path()), std::nullopt);  // gone
}

}  // namespace
}  // namespace accel::agent
