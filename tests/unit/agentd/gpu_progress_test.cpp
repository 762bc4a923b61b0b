// When a running job's GPU figures go to the aggregator (GpuProgressPacer):
// at its first sample, at its second (the first with energy), then at most
// once a minute while it is sampled; each event carries the figures so far.
#include "accel/agentd/gpu_progress.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "accel/agentd/node_telemetry.h"

namespace accel::agentd {
namespace {

using namespace std::chrono_literals;
using Clock = GpuProgressPacer::Clock;

agent::JobFigures job(uint32_t id, uint64_t samples, uint64_t idle_samples = 0) {
  agent::JobFigures f;
  f.job_id = id;
  f.samples = samples;
  f.idle_samples = idle_samples;
  agent::DeviceFigures d;
  d.index = 2;
  d.samples = samples;
  d.util_mean_pct = 25;
  d.util_max_pct = 50;
  f.devices.push_back(d);
  return f;
}

TEST(GpuProgressPacer, FirstSamplesThenAtMostOnceAMinute) {
  GpuProgressPacer pacer;
  const auto t0 = Clock::time_point{} + 1000s;
  EXPECT_TRUE(pacer.due({job(7, 0)}, t0, 10s).empty()) << "nothing before a sample";
  auto first = pacer.due({job(7, 1)}, t0, 10s);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].job_id, 7u);
  EXPECT_EQ(first[0].gpu.samples, 1u);
  ASSERT_EQ(first[0].gpu.devices.size(), 1u);
  EXPECT_EQ(first[0].gpu.devices[0].index, 2u);
  EXPECT_EQ(pacer.due({job(7, 2)}, t0 + 10s, 10s).size(), 1u) << "the first with energy";
  EXPECT_TRUE(pacer.due({job(7, 3)}, t0 + 20s, 10s).empty());
  EXPECT_TRUE(pacer.due({job(7, 7)}, t0 + 69s, 10s).empty());
  auto minute = pacer.due({job(7, 8, 3)}, t0 + 70s, 10s);
  ASSERT_EQ(minute.size(), 1u);
  EXPECT_EQ(minute[0].gpu.samples, 8u) << "cumulative";
  EXPECT_EQ(minute[0].idle_s, 30u) << "idle samples times the interval";
  EXPECT_TRUE(pacer.due({job(7, 8)}, t0 + 200s, 10s).empty()) << "not sampled since: nothing new";
}

TEST(GpuProgressPacer, JobsAreTrackedApartAndForgottenWhenTheyEnd) {
  GpuProgressPacer pacer(60s);
  const auto t0 = Clock::time_point{} + 1000s;
  EXPECT_EQ(pacer.due({job(7, 1), job(8, 1)}, t0, 1s).size(), 2u);
  EXPECT_TRUE(pacer.due({job(7, 1)}, t0 + 1s, 1s).empty());
  // Job 8 ended (not listed) and its id came back for a new job: a first sample again.
  EXPECT_EQ(pacer.due({job(8, 1)}, t0 + 2s, 1s).size(), 1u);
}

// One GPU at 60% that uses 1 J a sample.
class OneBusyGpu : public telemetry::TelemetrySource {
 public:
  Result<std::vector<telemetry::DeviceReading>> sample() override {
    auto d = devices();
    d[0].utilization_pct = 60;
    d[0].memory_used_bytes = uint64_t{512} << 20;
    d[0].energy_mj = 1000 * ++samples_;
    d[0].processes_read = true;
    return d;
  }
  std::vector<telemetry::DeviceReading> devices() const override {
    telemetry::DeviceReading d;
    d.pci_bus_id = "0000:3b:00.0";
    return {d};
  }
  std::string describe() const override { return "one busy GPU"; }

 private:
  uint64_t samples_ = 0;
};

// Through the sampler's own thread: a job's first samples reach the sink as
// GpuProgress events, with nothing asked of the hooks.
TEST(GpuProgress, TheSamplingThreadSendsARunningJobsFiguresToTheSink) {
  NodeTelemetry telemetry(std::make_unique<OneBusyGpu>(), 10ms,
                          [](uint32_t) { return std::optional<uint32_t>(); });
  std::mutex mu;
  std::condition_variable cv;
  std::vector<event::GpuProgress> sent;
  telemetry.setProgressSink([&](const event::Event& e) {
    std::lock_guard lock(mu);
    sent.push_back(std::get<event::GpuProgress>(e));
    cv.notify_all();
  });
  telemetry.jobStarted(42, {agent::DeviceRef::bus("0000:3b:00.0")});
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return sent.size() >= 2; }));
  EXPECT_EQ(sent[0].job_id, 42u);
  EXPECT_EQ(sent[0].gpu.samples, 1u);
  EXPECT_EQ(sent[1].gpu.samples, 2u);
  ASSERT_EQ(sent[1].gpu.devices.size(), 1u);
  EXPECT_EQ(sent[1].gpu.devices[0].util_max_pct, 60u);
  EXPECT_EQ(sent[1].gpu.devices[0].memory_used_max_mib, 512u);
  ASSERT_TRUE(sent[1].gpu.devices[0].energy_j);
  lock.unlock();
  telemetry.setProgressSink({});  // before `sent` goes
}

}  // namespace
}  // namespace accel::agentd
