// GPU telemetry as the daemon wires it: a job's figures in its EpilogFinished
// (MiB, joules, bounds), the job's devices as the sampler finds them, the
// stray line, the status reply's fields and accelctl's line, and the whole
// prolog -> samples -> epilog path through the handlers with a scripted source.
#include "accel/agentd/node_telemetry.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "accel/agent/job_dir_step.h"
#include "accel/agentd/control_handler.h"
#include "accel/agentd/node_health.h"
#include "accel/common/safe_file.h"
#include "accel/ctl/status_view.h"
#include "accel/events/codec.h"
#include "accel/schemas/control_generated.h"
#include "fake_clock.h"
#include "recording_events.h"
#include "temp_dir.h"
#include "test_inventory.h"

namespace accel::agentd {
namespace {

namespace fb = accel::control;
using namespace std::chrono_literals;

constexpr uint64_t kMiB = 1024 * 1024;

agent::JobFigures figures() {
  agent::JobFigures f;
  f.job_id = 7;
  f.samples = 4;
  agent::DeviceFigures d;
  d.index = 1;
  d.pci_bus_id = "0000:00:06.0";
  d.uuid = "GPU-1";
  d.found = true;
  d.samples = 4;
  d.util_mean_pct = 45.04;
  d.util_max_pct = 60;
  d.memory_used_max_bytes = 22069 * kMiB + 100;  // rounds to 22069 MiB
  d.energy_j = 567.48;
  f.devices.push_back(d);
  agent::DeviceFigures unread;
  unread.index = 2;
  f.devices.push_back(unread);
  f.processes.push_back(agent::ProcessFigures{467, 1, "0000:00:06.0", 21446 * kMiB});
  f.processes.push_back(agent::ProcessFigures{468, 1, "0000:00:06.0", std::nullopt});
  return f;
}

// The gauges' series: one per device read, by job and NVML index; the
// job's idle time in seconds; nothing for what was never read.
TEST(NodeTelemetry, GaugeSeriesPerJobAndDevice) {
  agent::JobFigures f = figures();
  f.devices[0].util_last_pct = 55;
  f.devices[0].memory_used_last_bytes = 2 * kMiB;
  f.idle_samples = 3;
  using Series = metrics::Registry::Series;
  EXPECT_EQ(gpuSeries({f}, GpuGauge::kUtilization, 10s), (Series{{{"7", "1"}, 55}}));
  EXPECT_EQ(gpuSeries({f}, GpuGauge::kMemoryBytes, 10s), (Series{{{"7", "1"}, 2.0 * kMiB}}));
  EXPECT_EQ(gpuSeries({f}, GpuGauge::kEnergyJoules, 10s), (Series{{{"7", "1"}, 567.48}}));
  EXPECT_EQ(gpuSeries({f}, GpuGauge::kIdleSeconds, 10s), (Series{{{"7"}, 30}}));
  EXPECT_TRUE(gpuSeries({}, GpuGauge::kUtilization, 10s).empty()) << "no job, no series";
}

TEST(NodeTelemetry, EventFiguresAreInMiBAndJoules) {
  auto g = eventFigures(figures());
  EXPECT_EQ(g.samples, 4u);
  ASSERT_EQ(g.devices.size(), 2u);
  EXPECT_EQ(g.devices[0].index, 1u);
  EXPECT_EQ(g.devices[0].pci_bus_id, "0000:00:06.0");
  EXPECT_EQ(g.devices[0].uuid, "GPU-1");
  EXPECT_EQ(g.devices[0].samples, 4u);
  EXPECT_FLOAT_EQ(g.devices[0].util_mean_pct, 45.0f);
  EXPECT_EQ(g.devices[0].util_max_pct, 60u);
  EXPECT_EQ(g.devices[0].memory_used_max_mib, std::optional<uint64_t>(22069));
  ASSERT_TRUE(g.devices[0].energy_j.has_value());
  EXPECT_DOUBLE_EQ(*g.devices[0].energy_j, 567.5);
  EXPECT_FALSE(g.devices[1].memory_used_max_mib.has_value());
  EXPECT_FALSE(g.devices[1].energy_j.has_value());
  ASSERT_EQ(g.processes.size(), 2u);
  EXPECT_EQ(g.processes[0].pid, 467u);
  EXPECT_EQ(g.processes[0].memory_max_mib, std::optional<uint64_t>(21446));
  EXPECT_FALSE(g.processes[1].memory_max_mib.has_value());
  EXPECT_EQ(g.processes_left_out, 0u);
}

TEST(NodeTelemetry, EventKeepsTheBiggestProcessesAndCountsTheRest) {
  agent::JobFigures f;
  for (uint32_t pid = 1; pid <= 70; ++pid)
    f.processes.push_back(agent::ProcessFigures{pid, 0, "", uint64_t{pid} * kMiB});
  auto g = eventFigures(f);
  ASSERT_EQ(g.processes.size(), event::GpuFigures::kMaxProcesses);
  EXPECT_EQ(g.processes_left_out, 6u);
  EXPECT_EQ(g.processes.front().pid, 7u) << "the six smallest are left out, the rest by pid";
  EXPECT_EQ(g.processes.back().pid, 70u);
}

TEST(NodeTelemetry, EpilogFinishedCarriesTheFiguresOverTheWire) {
  event::EpilogFinished e{.job_id = 7, .restart_count = 1};
  e.gpu = eventFigures(figures());
  auto bytes = event::encode(event::Header{.node = "n1", .epoch = 1, .seq = 2}, e);
  auto back = event::decode(bytes);
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_TRUE(back->event.has_value());
  const auto* got = std::get_if<event::EpilogFinished>(&*back->event);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(*got, e);
  // An epilog without figures stays without (an older agent, or no GPU).
  event::EpilogFinished plain{.job_id = 8};
  auto plain_back =
      event::decode(event::encode(event::Header{.node = "n1", .epoch = 1, .seq = 3}, plain));
  ASSERT_TRUE(plain_back.ok()) << plain_back.error().message();
  EXPECT_FALSE(std::get<event::EpilogFinished>(*plain_back->event).gpu.has_value());
}

TEST(NodeTelemetry, DevicesAreFoundByBusIdElseByGpuOrdinal) {
  std::vector<agent::DeviceUse> node{{0, "ipu0", "ipu", 0, ""},
                                     {1, "cuda0", "gpu", 0, "0000:03:00.0"},
                                     {2, "cuda1", "gpu", 0, ""},
                                     {3, "cuda2", "gpu", 0, "0000:05:00.0"}};
  auto refs = devicesOf(node, {0, 2, 3});
  ASSERT_EQ(refs.size(), 2u) << "the IPU is no GPU";
  EXPECT_EQ(refs[0].pci_bus_id, "");
  EXPECT_EQ(refs[0].index, std::optional<uint32_t>(1)) << "cuda1 is the node's second GPU";
  EXPECT_EQ(refs[1].pci_bus_id, "0000:05:00.0");
  EXPECT_TRUE(devicesOf(node, {}).empty());
}

TEST(NodeTelemetry, StrayLineNamesTheProcessAndTheGpu) {
  agent::StrayProcess s{.pid = 4242,
                        .device_index = 3,
                        .pci_bus_id = "0000:00:06.0",
                        .memory_bytes = 512 * kMiB,
                        .jobs_on_device = {9}};
  EXPECT_EQ(strayLine(s),
            "telemetry: process 4242 uses GPU 3 (0000:00:06.0) with 512 MiB and belongs to no "
            "job of this node, while a job holds that GPU");
}

// Scripted readings of the node's two GPUs (index 0 and 1, no bus id): busy
// at 50% and 180 W on GPU 0, one process of the job on it.
class TwoGpus : public telemetry::TelemetrySource {
 public:
  Result<std::vector<telemetry::DeviceReading>> sample() override {
    std::lock_guard lock(mu_);
    energy_mj_ += 180'000;
    std::vector<telemetry::DeviceReading> out(2);
    for (uint32_t i = 0; i < 2; ++i) {
      out[i].index = i;
      out[i].pci_bus_id = "0000:0" + std::to_string(i + 1) + ":00.0";
      out[i].utilization_pct = i == 0 ? 50 : 0;
      out[i].memory_used_bytes = (i == 0 ? 2048 : 1) * kMiB;
      out[i].energy_mj = energy_mj_;
      out[i].processes_read = true;
    }
    out[0].processes.push_back({job_pid, 1024 * kMiB});
    return out;
  }
  std::vector<telemetry::DeviceReading> devices() const override { return {}; }
  std::string describe() const override { return "two scripted GPUs"; }
  static constexpr uint32_t job_pid = 31337;

 private:
  std::mutex mu_;
  uint64_t energy_mj_ = 1'000'000;
};

// A source whose samples take 30 ms of wall time (NVML on a few GPUs).
class SlowSource : public telemetry::TelemetrySource {
 public:
  Result<std::vector<telemetry::DeviceReading>> sample() override {
    std::this_thread::sleep_for(30ms);
    return std::vector<telemetry::DeviceReading>{};
  }
  std::vector<telemetry::DeviceReading> devices() const override { return {}; }
  std::string describe() const override { return "slow"; }
};

TEST(NodeTelemetry, AnEpilogWaitsAtMostTwiceASampleAndNeverOver200Ms) {
  EXPECT_EQ(NodeTelemetry("no NVML").endWait(), 0ms);
  NodeTelemetry t(std::make_unique<SlowSource>(), 10s);
  EXPECT_EQ(t.endWait(), 0ms) << "no sample yet: nothing to size the wait by";
  t.jobStarted(1, {agent::DeviceRef::at(0)});  // asks for a sample at once
  for (int i = 0; i < 500 && t.status().state.samples < 1; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_GE(t.status().state.samples, 1u);
  EXPECT_GE(t.endWait(), 60ms);
  EXPECT_LE(t.endWait(), NodeTelemetry::kMaxEndWait);
}

class TelemetryHandlersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(makeDirectory(root_ + "/jobs", 0755).ok());
    std::vector<std::unique_ptr<agent::JobStep>> steps;
    steps.push_back(std::make_unique<agent::JobDirStep>(root_ + "/jobs"));
    manager_ = std::make_unique<agent::JobManager>(
        agent::JobStore(root_ + "/state"), testing::twoGpuInventory(), std::move(steps), clock_);
    ASSERT_TRUE(manager_->recover().ok());
    ctx_.manager = manager_.get();
    ctx_.node_name = "n1";
    ctx_.events = &events_;
  }
  void TearDown() override {
    telemetry_.reset();
    ASSERT_TRUE(tmp_.remove());
  }
  std::vector<uint8_t> request(fb::RequestBody kind, uint32_t job, const char* gpus = nullptr) {
    flatbuffers::FlatBufferBuilder fbb;
    flatbuffers::Offset<void> body;
    if (kind == fb::RequestBody::PrologRequest) {
      auto spec = fb::CreateJobSpecDirect(fbb, job, 1000, 1000, "alice", "n1", "debug", gpus);
      body = fb::CreatePrologRequest(fbb, spec).Union();
    } else if (kind == fb::RequestBody::EpilogRequest) {
      body = fb::CreateEpilogRequest(fbb, job, 0).Union();
    } else {
      body = fb::CreateStatusRequest(fbb).Union();
    }
    fbb.Finish(fb::CreateRequest(fbb, 1, kind, body), fb::RequestIdentifier());
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
  }
  const fb::Reply* call(const std::vector<uint8_t>& req) {
    last_ = handleRequest(ctx_, Caller{0, 1}, req);
    return flatbuffers::GetRoot<fb::Reply>(last_.data());
  }
  void useTelemetry(std::unique_ptr<NodeTelemetry> t) {
    telemetry_ = std::move(t);
    ctx_.telemetry = telemetry_.get();
  }

  support::TempDir tmp_;
  std::string root_ = tmp_.path();
  support::FakeClock clock_{5};
  std::unique_ptr<agent::JobManager> manager_;
  support::RecordingEvents events_;
  std::unique_ptr<NodeTelemetry> telemetry_;
  HandlerContext ctx_;
  std::vector<uint8_t> last_;
};

TEST_F(TelemetryHandlersTest, AGpuJobsEpilogCarriesItsFigures) {
  useTelemetry(std::make_unique<NodeTelemetry>(std::make_unique<TwoGpus>(), 10ms,
                                               [](uint32_t pid) -> std::optional<uint32_t> {
                                                 if (pid == TwoGpus::job_pid) return 7;
                                                 return std::nullopt;
                                               }));
  ASSERT_EQ(call(request(fb::RequestBody::PrologRequest, 7, "0"))->outcome(), fb::Outcome::Ok);
  // Samples every 10 ms while the job holds its GPU; three make energy certain.
  for (int i = 0; i < 500 && telemetry_->status().state.samples < 3; ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_GE(telemetry_->status().state.samples, 3u);
  EXPECT_EQ(telemetry_->status().state.jobs, 1u);
  ASSERT_EQ(call(request(fb::RequestBody::EpilogRequest, 7))->outcome(), fb::Outcome::Ok);
  const event::EpilogFinished* end = nullptr;
  auto all = events_.events();
  for (const auto& e : all)
    if (const auto* f = std::get_if<event::EpilogFinished>(&e)) end = f;
  ASSERT_NE(end, nullptr);
  ASSERT_TRUE(end->gpu.has_value()) << "the epilog of a GPU job carries its figures";
  ASSERT_EQ(end->gpu->devices.size(), 1u) << "only the job's GPU";
  const auto& d = end->gpu->devices[0];
  EXPECT_EQ(d.index, 0u);
  EXPECT_GE(d.samples, 3u);
  EXPECT_FLOAT_EQ(d.util_mean_pct, 50.0f);
  EXPECT_EQ(d.util_max_pct, 50u);
  EXPECT_EQ(d.memory_used_max_mib, std::optional<uint64_t>(2048));
  ASSERT_TRUE(d.energy_j.has_value());
  EXPECT_GE(*d.energy_j, 360.0) << "at least two intervals of 180 J";
  ASSERT_EQ(end->gpu->processes.size(), 1u);
  EXPECT_EQ(end->gpu->processes[0].pid, TwoGpus::job_pid);
  EXPECT_EQ(end->gpu->processes[0].memory_max_mib, std::optional<uint64_t>(1024));
  EXPECT_EQ(telemetry_->status().state.jobs, 0u) << "the epilog ended the job's sampling";
}

TEST_F(TelemetryHandlersTest, AJobWithoutGpusAndANodeWithoutNvmlGetNoFigures) {
  useTelemetry(std::make_unique<NodeTelemetry>("no NVML: libnvidia-ml.so.1: not found"));
  ASSERT_EQ(call(request(fb::RequestBody::PrologRequest, 8, "0"))->outcome(), fb::Outcome::Ok);
  ASSERT_EQ(call(request(fb::RequestBody::EpilogRequest, 8))->outcome(), fb::Outcome::Ok);
  auto all = events_.events();
  ASSERT_FALSE(all.empty());
  const auto* end = std::get_if<event::EpilogFinished>(&all.back());
  ASSERT_NE(end, nullptr);
  EXPECT_FALSE(end->gpu.has_value());
}

TEST_F(TelemetryHandlersTest, StatusSaysNoNvmlAndWhy) {
  useTelemetry(std::make_unique<NodeTelemetry>("no NVML: libnvidia-ml.so.1: not found"));
  const auto* s = call(request(fb::RequestBody::StatusRequest, 0))->body_as_StatusInfo();
  ASSERT_NE(s, nullptr);
  ASSERT_NE(s->telemetry(), nullptr);
  EXPECT_FALSE(s->telemetry()->loaded());
  EXPECT_EQ(s->telemetry()->reason()->str(), "no NVML: libnvidia-ml.so.1: not found");
  EXPECT_NE(ctl::statusTable(*s, 0).find("\ntelemetry   no NVML\n"), std::string::npos)
      << ctl::statusTable(*s, 0);
  EXPECT_NE(ctl::statusJson(*s, 0).find("libnvidia-ml.so.1: not found"), std::string::npos);
}

TEST_F(TelemetryHandlersTest, StatusShowsTheSamplerWhenLoaded) {
  useTelemetry(std::make_unique<NodeTelemetry>(std::make_unique<TwoGpus>(), 2000ms));
  ASSERT_EQ(call(request(fb::RequestBody::PrologRequest, 9, "1"))->outcome(), fb::Outcome::Ok);
  for (int i = 0; i < 500 && telemetry_->status().state.samples < 1; ++i)
    std::this_thread::sleep_for(10ms);
  const auto* s = call(request(fb::RequestBody::StatusRequest, 0))->body_as_StatusInfo();
  ASSERT_NE(s, nullptr);
  ASSERT_NE(s->telemetry(), nullptr);
  EXPECT_TRUE(s->telemetry()->loaded());
  EXPECT_EQ(s->telemetry()->source()->str(), "two scripted GPUs");
  EXPECT_EQ(s->telemetry()->interval_ms(), 2000u);
  EXPECT_GE(s->telemetry()->samples(), 1u);
  EXPECT_EQ(s->telemetry()->failures(), 0u);
  EXPECT_EQ(s->telemetry()->jobs(), 1u);
  const std::string table = ctl::statusTable(*s, 0);
  EXPECT_NE(table.find("telemetry   two scripted GPUs, every 2 s; "), std::string::npos) << table;
  EXPECT_NE(table.find("1 job sampled now"), std::string::npos) << table;
  // The stray process of the scripted GPU 0 (pid 31337 is no job's here)
  // is not on the job's GPU 1: no node fault.
  EXPECT_EQ(s->telemetry()->strays(), 0u);
}

TEST_F(TelemetryHandlersTest, AStrayProcessOnAHeldGpuIsANodeFaultOnce) {
  NodeHealth health;
  ctx_.health = &health;
  // No process belongs to any job: pid 31337 on GPU 0 is a stray once job 10 holds GPU 0.
  useTelemetry(std::make_unique<NodeTelemetry>(std::make_unique<TwoGpus>(), 10ms,
                                               [](uint32_t) { return std::nullopt; }));
  ASSERT_EQ(call(request(fb::RequestBody::PrologRequest, 10, "0"))->outcome(), fb::Outcome::Ok);
  for (int i = 0; i < 500 && telemetry_->status().state.samples < 3; ++i)
    std::this_thread::sleep_for(10ms);
  const auto* s = call(request(fb::RequestBody::StatusRequest, 0))->body_as_StatusInfo();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->telemetry()->strays(), 1u) << "reported once, not once per sample";
  auto faults = health.snapshot().errors;
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_NE(faults[0].message.find("process 31337 uses GPU 0"), std::string::npos);
}

}  // namespace
}  // namespace accel::agentd
