// GPU Xids tied to jobs: attribution by bus id and by pid, what an
// application and a hardware Xid lead to (an event; a kept fault and a node
// fault), the fault file across a restart, clearing, and the counter's
// bounded labels.
#include "accel/agentd/gpu_xids.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "temp_dir.h"

namespace accel::agentd {
namespace {

using telemetry::XidClass;
using telemetry::XidReport;

std::vector<agent::DeviceUse> node() {
  return {{0, "cuda0", "gpu", 42, "0000:3B:00.0"},
          {1, "cuda1", "gpu", 0, "0000:86:00.0"},
          {2, "mlx5_0", "other", 0, "0000:5e:00.0"}};
}

// The daemon's library does not parse kernel log lines itself (the NVML
// adapter's parser is handed in): here literal lines map to literal reports.
XidReport xid(uint32_t code, std::string device, std::optional<uint32_t> pid, std::string text) {
  XidReport r;
  r.code = code;
  r.device = std::move(device);
  r.pid = pid;
  r.text = std::move(text);
  return r;
}

const std::map<std::string, XidReport>& lines() {
  static const std::map<std::string, XidReport> m = {
      {"xid13", xid(13, "0000:3b:00", 77, "Graphics SM Warp Exception")},
      {"xid31-free", xid(31, "0000:86:00", 77, "MMU Fault")},
      {"xid79-unknown-device", xid(79, "0000:af:00", std::nullopt, "GPU has fallen off the bus.")},
      {"xid79", xid(79, "0000:3b:00", std::nullopt, "GPU has fallen off the bus.")},
      {"xid48-free", xid(48, "0000:86:00", std::nullopt, "DBE (double bit error) ECC error")},
      {"xid62", xid(62, "0000:86:00", std::nullopt, "Internal micro-controller halt")},
  };
  return m;
}

XidReport report(const std::string& key) { return lines().at(key); }

XidDecoder decoder() {
  XidDecoder d;
  d.parse = [](std::string_view line) -> std::optional<XidReport> {
    auto it = lines().find(std::string(line));
    if (it == lines().end()) return std::nullopt;
    return it->second;
  };
  d.classify = [](uint32_t code) {
    if (code == 13 || code == 31) return XidClass::kApplication;
    if (code == 48 || code == 79) return XidClass::kHardware;
    return XidClass::kOther;
  };
  return d;
}

TEST(XidAttribution, TheBusIdNamesTheGpuAndTheJobHoldingIt) {
  auto who = attributeXid(report("xid13"), node(), {}, {});
  EXPECT_EQ(who.job_id, 42u);
  EXPECT_EQ(who.gpu, std::optional<uint32_t>(0));
  EXPECT_EQ(who.pci_bus_id, "0000:3b:00.0");
  EXPECT_FALSE(who.by_pid);
}

TEST(XidAttribution, AFreeGpuFallsBackToThePidsJobWhenThatJobIsOnThisNode) {
  agent::JobOfPid job_of = [](uint32_t pid) -> std::optional<uint32_t> {
    return pid == 77 ? std::optional<uint32_t>(43) : std::nullopt;
  };
  const std::string line = "xid31-free";
  auto who = attributeXid(report(line), node(), job_of, [](uint32_t j) { return j == 43; });
  EXPECT_EQ(who.job_id, 43u);
  EXPECT_EQ(who.gpu, std::optional<uint32_t>(1));
  EXPECT_TRUE(who.by_pid);
  // A pid whose cgroup names a job this node does not have is not believed.
  auto stranger = attributeXid(report(line), node(), job_of, [](uint32_t) { return false; });
  EXPECT_EQ(stranger.job_id, 0u);
}

TEST(XidAttribution, AnUnknownDeviceKeepsTheLinesBusId) {
  auto who = attributeXid(report("xid79-unknown-device"), node(), {}, {});
  EXPECT_EQ(who.job_id, 0u);
  EXPECT_EQ(who.gpu, std::nullopt);
  EXPECT_EQ(who.pci_bus_id, "0000:af:00.0");
}

TEST(XidLabels, OnlyTheTablesCodesAreLabels) {
  EXPECT_EQ(xidCodeLabel(XidClass::kApplication, 13), "13");
  EXPECT_EQ(xidCodeLabel(XidClass::kHardware, 79), "79");
  EXPECT_EQ(xidCodeLabel(XidClass::kOther, 12345), "other");
}

struct Seen {
  std::vector<event::Event> events;
  std::vector<std::pair<uint32_t, std::string>> faults;
};

XidMonitor::Hooks hooks(Seen& seen) {
  XidMonitor::Hooks h;
  h.decoder = decoder();
  h.devices = [] { return node(); };
  h.on_node = [](uint32_t) { return true; };
  h.emit = [&seen](const event::Event& e) { seen.events.push_back(e); };
  h.node_fault = [&seen](uint32_t job, const std::string& why) {
    seen.faults.emplace_back(job, why);
  };
  h.now_ns = [] { return int64_t{1'700'000'000'000'000'000}; };
  return h;
}

TEST(XidMonitor, AnApplicationXidIsRecordedWithTheJobAndNeverANodeFault) {
  Seen seen;
  metrics::Registry registry;
  XidMonitor m(hooks(seen), "", &registry);
  // Every series of the table is there at 0 before any Xid (an alert sees
  // the first one as an increase), and nothing but the table's codes.
  const std::string before = registry.render(metrics::Format::kPrometheus);
  EXPECT_NE(before.find("accel_gpu_xid_total{class=\"hardware\",code=\"79\"} 0"), std::string::npos)
      << before;
  EXPECT_NE(before.find("accel_gpu_xid_total{class=\"other\",code=\"other\"} 0"),
            std::string::npos);
  EXPECT_EQ(before.find("code=\"62\""), std::string::npos);
  ASSERT_TRUE(m.onLine("xid13"));
  ASSERT_EQ(seen.events.size(), 1u);
  const auto& x = std::get<event::GpuXid>(seen.events[0]);
  EXPECT_EQ(x.job_id, 42u);
  EXPECT_EQ(x.code, 13u);
  EXPECT_EQ(x.gpu_class, "application");
  EXPECT_EQ(x.gpu, 0);
  EXPECT_EQ(x.pid, 77u);
  EXPECT_EQ(x.text, "Graphics SM Warp Exception");
  EXPECT_FALSE(x.drained);
  EXPECT_TRUE(seen.faults.empty());
  EXPECT_TRUE(m.faults().empty());
  EXPECT_NE(registry.render(metrics::Format::kPrometheus)
                .find("accel_gpu_xid_total{class=\"application\",code=\"13\"} 1"),
            std::string::npos)
      << registry.render(metrics::Format::kPrometheus);
  m.onLine("xid62");
  EXPECT_NE(registry.render(metrics::Format::kPrometheus)
                .find("accel_gpu_xid_total{class=\"other\",code=\"other\"} 1"),
            std::string::npos)
      << "a code outside the table is counted as other";
}

TEST(XidMonitor, AHardwareXidIsANodeFaultNamingTheXidTheGpuAndTheJob) {
  Seen seen;
  XidMonitor m(hooks(seen), "", nullptr);
  m.onLine("xid79");
  ASSERT_EQ(seen.faults.size(), 1u);
  EXPECT_EQ(seen.faults[0].first, 42u);
  EXPECT_EQ(seen.faults[0].second,
            "accel: node fault: GPU Xid 79 (hardware) on GPU 0 (0000:3b:00.0), job 42: GPU has "
            "fallen off the bus.");
  ASSERT_EQ(seen.events.size(), 1u);
  EXPECT_TRUE(std::get<event::GpuXid>(seen.events[0]).drained);
  ASSERT_EQ(m.faults().size(), 1u);
  EXPECT_EQ(m.faults()[0].message, seen.faults[0].second);
}

TEST(XidMonitor, AHardwareXidOnAFreeGpuIsANodeFaultWithoutAnEvent) {
  Seen seen;
  XidMonitor m(hooks(seen), "", nullptr);
  m.onLine("xid48-free");
  EXPECT_TRUE(seen.events.empty());
  ASSERT_EQ(seen.faults.size(), 1u);
  EXPECT_EQ(seen.faults[0].first, 0u);
  EXPECT_NE(seen.faults[0].second.find("GPU 1 (0000:86:00.0), no job"), std::string::npos);
}

TEST(XidMonitor, OtherLinesAreNotXids) {
  Seen seen;
  XidMonitor m(hooks(seen), "", nullptr);
  EXPECT_FALSE(m.onLine("6,1,1,-;eth0: link up"));
  EXPECT_FALSE(m.onLine("NVRM: Xid (PCI:zz): 79, forged"));
  XidMonitor::Hooks none = hooks(seen);
  none.decoder = {};
  XidMonitor without(std::move(none), "", nullptr);
  EXPECT_FALSE(without.onLine("xid79")) << "no decoder: nothing is read";
  EXPECT_TRUE(seen.events.empty());
  EXPECT_TRUE(seen.faults.empty());
}

TEST(XidMonitor, FaultsOutliveARestartUntilCleared) {
  support::TempDir dir("accel-xid");
  const std::string file = dir.file("gpu-faults");
  {
    Seen seen;
    XidMonitor m(hooks(seen), file, nullptr);
    m.onLine("xid79");
    m.onLine("xid13");
  }
  Seen seen;
  XidMonitor again(hooks(seen), file, nullptr);
  EXPECT_EQ(again.fileError(), "");
  ASSERT_EQ(again.faults().size(), 1u) << "the hardware fault only";
  EXPECT_EQ(again.faults()[0].at_ns, 1'700'000'000'000'000'000);
  EXPECT_NE(again.faults()[0].message.find("Xid 79"), std::string::npos);
  auto cleared = again.clear();
  ASSERT_TRUE(cleared.ok());
  EXPECT_EQ(*cleared, 1u);
  XidMonitor third(hooks(seen), file, nullptr);
  EXPECT_TRUE(third.faults().empty());
}

TEST(XidMonitor, AGarbledFaultsFileLosesOnlyItsBadLines) {
  support::TempDir dir("accel-xid");
  const std::string file = dir.file("gpu-faults");
  std::ofstream(file) << "garbage\n12 accel: node fault: GPU Xid 48\nx1 nope\n";
  Seen seen;
  XidMonitor m(hooks(seen), file, nullptr);
  ASSERT_EQ(m.faults().size(), 1u);
  EXPECT_EQ(m.faults()[0].at_ns, 12);
}

}  // namespace
}  // namespace accel::agentd
