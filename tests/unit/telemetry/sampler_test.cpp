// The sampling thread (TelemetrySampler): driven by sampleNow() and the
// job calls, never by sleeping for an interval, so the tests are quick and
// deterministic. Runs under ThreadSanitizer in CI (label tsan).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <fstream>
#include <mutex>

#include "accel/agent/telemetry_sampler.h"
#include "accel/nvml/nvml_source.h"
#include "temp_dir.h"

namespace accel::agent {
namespace {

using namespace std::chrono_literals;
using telemetry::DeviceReading;

// A source that holds state: each sample is the next of a scripted list (the
// last repeats), and it counts the samples asked of it.
class FakeSource : public telemetry::TelemetrySource {
 public:
  struct Shared {
    std::mutex mu;
    std::vector<std::vector<DeviceReading>> script;
    size_t next = 0;
    std::atomic<int> calls{0};
    bool fail = false;
  };
  explicit FakeSource(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  Result<std::vector<DeviceReading>> sample() override {
    ++shared_->calls;
    std::lock_guard lock(shared_->mu);
    if (shared_->fail) return Error(ErrorCode::kUnavailable, "fake: gone");
    auto out = shared_->script[std::min(shared_->next, shared_->script.size() - 1)];
    ++shared_->next;
    return out;
  }
  std::vector<DeviceReading> devices() const override { return {}; }
  std::string describe() const override { return "fake source"; }

 private:
  std::shared_ptr<Shared> shared_;
};

DeviceReading gpu(uint32_t util, uint64_t energy_mj) {
  DeviceReading r;
  r.index = 0;
  r.pci_bus_id = "0000:00:06.0";
  r.utilization_pct = util;
  r.memory_used_bytes = util * 10;
  r.energy_mj = energy_mj;
  r.processes_read = true;
  return r;
}

struct Fixture {
  std::shared_ptr<FakeSource::Shared> shared = std::make_shared<FakeSource::Shared>();
  std::unique_ptr<TelemetrySampler> sampler;
  explicit Fixture(std::chrono::milliseconds interval = 3600s) {
    shared->script = {{gpu(0, 1'000)}, {gpu(50, 3'000)}, {gpu(100, 6'000)}};
    sampler = std::make_unique<TelemetrySampler>(
        std::make_unique<FakeSource>(shared),
        TelemetrySampler::Options{.interval = interval,
                                  .job_of = [](uint32_t) { return std::optional<uint32_t>(); }});
  }
};

TEST(TelemetrySampler, StartsAndStopsCleanlyWithoutEverSampling) {
  Fixture f(1ms);
  f.sampler->start();
  f.sampler->start();  // a second start does nothing
  EXPECT_TRUE(f.sampler->state().running);
  f.sampler->stop();
  f.sampler->stop();
  EXPECT_FALSE(f.sampler->state().running);
  // No job was ever accounted: the source was never read, even at 1 ms.
  EXPECT_EQ(f.shared->calls.load(), 0);
  EXPECT_EQ(f.sampler->state().source, "fake source");
}

TEST(TelemetrySampler, AJobsStartTakesABaselineAndItsEndAFinalSample) {
  Fixture f;
  f.sampler->start();
  f.sampler->startJob(42, {DeviceRef::bus("0000:00:06.0")});
  ASSERT_TRUE(f.sampler->sampleNow(10s));
  auto figures = f.sampler->endJob(42, 10s);
  ASSERT_TRUE(figures.has_value());
  // The start's sample, the one asked for, the end's: 0, 50, 100.
  EXPECT_EQ(figures->samples, 3u);
  ASSERT_EQ(figures->devices.size(), 1u);
  EXPECT_DOUBLE_EQ(figures->devices[0].util_mean_pct, 50.0);
  EXPECT_EQ(figures->devices[0].util_max_pct, 100u);
  EXPECT_EQ(figures->devices[0].memory_used_max_bytes, 1000u);
  EXPECT_EQ(figures->devices[0].energy_j, 5.0);
  EXPECT_EQ(f.sampler->state().samples, 3u);
  EXPECT_GE(f.sampler->state().cpu_ns, 0);
  f.sampler->stop();
}

TEST(TelemetrySampler, StopsSamplingWhenTheLastJobEnds) {
  Fixture f(1ms);
  f.sampler->start();
  f.sampler->startJob(1, {DeviceRef::at(0)});
  ASSERT_TRUE(f.sampler->sampleNow(10s));
  ASSERT_TRUE(f.sampler->endJob(1).has_value());
  // One more may have been under way as the job ended; after it, none.
  ASSERT_FALSE(f.sampler->snapshot(1).has_value());
  ASSERT_TRUE(f.sampler->sampleNow(10s));  // an explicit request is still served
  int calls = f.shared->calls.load();
  std::this_thread::sleep_for(50ms);  // fifty intervals
  EXPECT_EQ(f.shared->calls.load(), calls);
  f.sampler->stop();
}

TEST(TelemetrySampler, WithoutTheThreadEndJobDoesNotWait) {
  Fixture f;
  f.sampler->startJob(1, {DeviceRef::at(0)});
  EXPECT_FALSE(f.sampler->sampleNow(10s));
  auto figures = f.sampler->endJob(1, 10s);
  ASSERT_TRUE(figures.has_value());
  EXPECT_EQ(figures->samples, 0u);
  EXPECT_EQ(f.shared->calls.load(), 0);
}

TEST(TelemetrySampler, ASourceThatFailsIsCountedAndNamed) {
  Fixture f;
  f.shared->fail = true;
  f.sampler->start();
  f.sampler->startJob(1, {DeviceRef::at(0)});
  ASSERT_TRUE(f.sampler->sampleNow(10s));
  auto state = f.sampler->state();
  EXPECT_GE(state.failures, 1u);
  EXPECT_EQ(state.last_error, "fake: gone");
  EXPECT_EQ(f.sampler->snapshot(1)->samples, 0u);
  f.sampler->stop();
}

TEST(TelemetrySampler, ManyJobsFromManyThreads) {
  Fixture f(1ms);
  f.sampler->start();
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t i = 0; i < 25; ++i) {
        uint32_t job = t * 100 + i + 1;
        f.sampler->startJob(job, {DeviceRef::at(0)});
        (void)f.sampler->snapshot(job);
        EXPECT_TRUE(f.sampler->endJob(job, 1ms).has_value());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_TRUE(f.sampler->sampleNow(10s));  // still serving after the storm
  f.sampler->stop();
  EXPECT_FALSE(f.sampler->snapshot(1).has_value());
}

// The whole path: the NVML adapter over the fake NVML with the captured H200,
// and the sampler, for a job that runs through the capture's busy phase.
TEST(TelemetrySampler, AJobOnTheFakeH200ThroughNvml) {
  const std::string dir = std::string(ACCEL_HW_MOCK_DIR) + "/nvml/h200";
  ::setenv("ACCEL_FAKE_NVML_DIR", dir.c_str(), 1);
  auto source = nvml::NvmlSource::open(ACCEL_FAKE_NVML);
  ASSERT_TRUE(source.ok()) << source.error().message();
  TelemetrySampler sampler(std::move(*source), {.interval = 3600s, .job_of = [](uint32_t pid) {
                                                  return pid == 467 ? std::optional<uint32_t>(77)
                                                                    : std::nullopt;
                                                }});
  sampler.start();
  sampler.startJob(77, {DeviceRef::bus("0000:00:06.0")});           // sample 0: idle
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(sampler.sampleNow(10s));  // idle x2, busy x3, after
  auto figures = sampler.endJob(77, 10s);                           // rest
  sampler.stop();
  ::unsetenv("ACCEL_FAKE_NVML_DIR");
  ASSERT_TRUE(figures.has_value());
  EXPECT_EQ(figures->samples, 8u);
  const DeviceFigures& d = figures->devices[0];
  EXPECT_EQ(d.uuid, "GPU-4f157061-cbaa-e5dc-acd7-592157a35040");
  EXPECT_EQ(d.util_max_pct, 60u);
  EXPECT_DOUBLE_EQ(d.util_mean_pct, (3 * 60 + 11) / 8.0);
  EXPECT_EQ(d.memory_used_max_bytes, 23141941248u);
  // Seven intervals of a second: 2 idle, 3 busy, 1 after, 1 rest (mW x s = mJ).
  EXPECT_DOUBLE_EQ(*d.energy_j, (2 * 80587 + 3 * 189160 + 169737 + 80587) / 1000.0);
  ASSERT_EQ(figures->processes.size(), 1u);
  EXPECT_EQ(figures->processes[0].pid, 467u);
  EXPECT_EQ(figures->processes[0].memory_max_bytes, 22487760896u);
}

}  // namespace
}  // namespace accel::agent
