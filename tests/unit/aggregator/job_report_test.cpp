// `accelctl report`'s document, composed by the aggregator from a job's
// summary: the plain line, per-device rows, the state, idle time, limit and
// errors, for a finished job (its epilogs' figures) and a running one (its
// nodes' latest GpuProgress).
#include "accel/aggregator/job_report.h"

#include <gtest/gtest.h>

namespace accel::aggregator {
namespace {

using namespace accel::event;

GpuDeviceFigures device(uint32_t index, float mean, uint32_t max, uint64_t mib, double joules,
                        uint64_t samples = 12) {
  GpuDeviceFigures d;
  d.index = index;
  d.samples = samples;
  d.util_mean_pct = mean;
  d.util_max_pct = max;
  d.memory_used_max_mib = mib;
  d.energy_j = joules;
  return d;
}

// A GPU job on `node` with `gpus` GPUs: its prolog's events.
JobSummary gpuJob(uint32_t gpus, const std::string& node = "g1") {
  JobSummary s;
  s.job_id = 42;
  mergeEvent(s, node, PrologStarted{42, 1000, "alice", node, 1});
  PrologFinished p{42};
  p.accel_kind = "gpu";
  for (uint32_t i = 0; i < gpus; ++i) p.devices.push_back("cuda" + std::to_string(i));
  mergeEvent(s, node, p);
  return s;
}

void end(JobSummary& s, std::vector<GpuDeviceFigures> devices, const std::string& node = "g1") {
  EpilogFinished e{42};
  e.gpu = GpuFigures{12, std::move(devices), {}, 0};
  mergeEvent(s, node, e, 1'700'000'000'000'000'000);
}

TEST(JobReport, OneGpuFinishedIsExactlyAsDocumented) {
  JobSummary s = gpuJob(1);
  end(s, {device(0, 31.44F, 87, 40960, 12345.6)});
  EXPECT_EQ(
      reportText(s),
      R"({"v":1,"job_id":42,"state":"finished","line":"held 1 GPU, used 1 of them, mean 31%",)"
      R"("result":"ok","accel":"gpu","count":1,"partition":"",)"
      R"("gpus":{"held":1,"with_figures":1,"used":1,"util_mean_pct":31.4,"energy_j":12346},)"
      R"("idle_s":null,"limit":null,)"
      R"("errors":{"prolog":{},"cleanup_failed":[],"limit_unmeasured":[]},)"
      R"("idle":{},"ended":null,"missing_nodes":[],)"
      R"("nodes_left_out":0,"nodes":[{"name":"g1","figures":"epilog","epilog":true,)"
      R"("updated":null,"idle_s":null}],"devices_left_out":0,)"
      R"("devices":[{"node":"g1","index":0,"util_mean_pct":31.4,"util_max_pct":87,)"
      R"("memory_max_mib":40960,"energy_j":12346,"samples":12,"used":true}]})");
}

TEST(JobReport, EightGpusTwoUsed) {
  JobSummary s = gpuJob(8);
  std::vector<GpuDeviceFigures> devices{device(0, 80, 100, 70000, 50000),
                                        device(1, 44, 90, 70000, 40000)};
  for (uint32_t i = 2; i < 8; ++i) devices.push_back(device(i, 0, 0, 0, 700));
  end(s, devices);
  const auto r = composeReport(s);
  // (80 + 44 + 6 * 0) / 8 = 15.5 -> 16 in the line, 15.5 in the field.
  EXPECT_EQ(r["line"], "held 8 GPUs, used 2 of them, mean 16%");
  EXPECT_EQ(r["gpus"]["util_mean_pct"], 15.5);
  EXPECT_EQ(r["gpus"]["energy_j"], 50000 + 40000 + 6 * 700);
  ASSERT_EQ(r["devices"].size(), 8u);
  EXPECT_TRUE(r["devices"][1]["used"]);
  EXPECT_FALSE(r["devices"][7]["used"]);
}

TEST(JobReport, AGpuNeverUsedSaysUsedNoneOfThem) {
  JobSummary s = gpuJob(1);
  end(s, {device(0, 0, 0, 0, 710)});
  const auto r = composeReport(s);
  EXPECT_EQ(r["line"], "held 1 GPU, used 0 of them, mean 0%");
  EXPECT_FALSE(r["devices"][0]["used"]);
}

TEST(JobReport, AnIpuJobHasNoGpuRows) {
  JobSummary s;
  s.job_id = 42;
  mergeEvent(s, "ipu1", PrologStarted{42, 1000, "alice", "ipu1", 1});
  PrologFinished p{42};
  p.accel_kind = "ipu";
  p.partition = "p42";
  p.devices = {"p42:0", "p42:1", "p42:2", "p42:3"};
  mergeEvent(s, "ipu1", p);
  mergeEvent(s, "ipu1", EpilogFinished{42});
  const auto r = composeReport(s);
  EXPECT_EQ(r["line"], "held 4 IPUs in partition p42; IPUs give no utilization figures");
  EXPECT_EQ(r["gpus"]["held"], 0);
  EXPECT_TRUE(r["devices"].empty());
  EXPECT_EQ(r["nodes"][0]["figures"], "none");
}

TEST(JobReport, ARunningJobShowsItsNodesLatestProgressAndTheEpilogReplacesIt) {
  JobSummary s = gpuJob(2);
  EXPECT_EQ(composeReport(s)["line"], "holds 2 GPUs; no utilization figures yet");
  GpuProgress first{42, 0, GpuFigures{1, {device(0, 10, 10, 100, 0, 1), device(1, 0, 0, 0, 0, 1)}}};
  EXPECT_TRUE(mergeEvent(s, "g1", first, 1'000'000'000));
  GpuProgress later{
      42, 0, GpuFigures{60, {device(0, 50, 90, 900, 3000, 60), device(1, 0, 0, 0, 500, 60)}}};
  EXPECT_TRUE(mergeEvent(s, "g1", later, 61'000'000'000));
  auto r = composeReport(s);
  EXPECT_EQ(r["state"], "running");
  EXPECT_EQ(r["line"], "holds 2 GPUs, uses 1 of them, mean 25% so far")
      << "the latest progress replaces the one before, never added to it";
  EXPECT_EQ(r["nodes"][0]["figures"], "live");
  EXPECT_EQ(r["nodes"][0]["updated"], "1970-01-01T00:01:01.000Z");
  EXPECT_EQ(r["devices"][0]["samples"], 60);

  end(s, {device(0, 40, 95, 1000, 4000, 70), device(1, 0, 0, 0, 600, 70)});
  GpuProgress stale{42, 0, GpuFigures{61, {device(0, 99, 99, 1, 1, 61)}}};
  EXPECT_FALSE(mergeEvent(s, "g1", stale, 62'000'000'000)) << "after the node's epilog";
  r = composeReport(s);
  EXPECT_EQ(r["state"], "finished");
  EXPECT_EQ(r["line"], "held 2 GPUs, used 1 of them, mean 20%");
  EXPECT_EQ(r["nodes"][0]["figures"], "epilog");
  EXPECT_EQ(r["devices"][0]["samples"], 70);
}

TEST(JobReport, IdleTimeIsTheLeastOfTheNodes) {
  JobSummary s;
  s.job_id = 42;
  for (const char* n : {"g1", "g2"}) {
    mergeEvent(s, n, PrologStarted{42, 1000, "alice", "g[1-2]", 2});
    PrologFinished p{42};
    p.accel_kind = "gpu";
    p.devices = {"cuda0"};
    mergeEvent(s, n, p);
  }
  mergeEvent(s, "g1", GpuProgress{42, 600, GpuFigures{60, {device(0, 0, 0, 0, 10, 60)}}}, 1);
  mergeEvent(s, "g2", GpuProgress{42, 120, GpuFigures{60, {device(0, 5, 30, 0, 10, 60)}}}, 1);
  const auto r = composeReport(s);
  EXPECT_EQ(r["idle_s"], 120);
  EXPECT_EQ(r["nodes"][0]["idle_s"], 600);
  EXPECT_EQ(r["line"], "holds 2 GPUs, uses 1 of them, mean 3% so far");
}

TEST(JobReport, TheLimitAndErrorsAreShown) {
  JobSummary s = gpuJob(1);
  TimeLimitWarning w{42, 3600, 3480};
  mergeEvent(s, "g1", w);
  mergeEvent(s, "g1", ApplianceJobChanged{42, "wsjob-1", ApplianceState::kRunning, 1, 120});
  EpilogFinished e{42};
  e.cleanup_ok = false;
  mergeEvent(s, "g1", e);
  const auto r = composeReport(s);
  EXPECT_EQ(r["limit"]["appliance_limit_s"], 3600);
  EXPECT_EQ(r["limit"]["appliance_s"], 120);
  EXPECT_EQ(r["line"],
            "held 1 GPU; no utilization figures (its nodes sample no GPUs), appliance time 2 min "
            "of 1 h (3%)");
  EXPECT_EQ(r["errors"]["cleanup_failed"], nlohmann::ordered_json::array({"g1"}));
}

// Device errors as the summary's comment records them ("xid"), when it has
// some; without, errors has no "xid" key (OneGpuFinishedIsExactlyAsDocumented).
TEST(JobReport, TheSummarysXidsAreAmongItsErrors) {
  JobSummary s = gpuJob(1);
  mergeEvent(s, "g1", GpuXid{42, 79, "hardware", "0000:3b:00.0", 0, 0, "fallen off the bus", true});
  const auto r = composeReport(s);
  ASSERT_TRUE(r["errors"].contains("xid")) << r.dump();
  EXPECT_EQ(r["errors"]["xid"].dump(), nlohmann::json::parse(toCommentJson(s))["xid"].dump());
  EXPECT_FALSE(r["errors"]["xid"].empty());
}

// A job the agent cancelled for idle GPUs (IdleAction=cancel): its report
// carries the node's idle note and says why it ended, in the line too.
TEST(JobReport, AnIdleCancelIsNamed) {
  JobSummary s = gpuJob(1);
  mergeEvent(s, "g1", JobIdle{42, 1800, {0}, IdleAction::kCancel, true});
  end(s, {device(0, 0, 0, 615, 322)});
  const auto r = composeReport(s);
  EXPECT_EQ(r["ended"], "idle accelerators");
  EXPECT_EQ(r["idle"]["g1"]["idle_s"], 1800);
  EXPECT_EQ(r["idle"]["g1"]["action"], "cancel");
  EXPECT_EQ(r["line"],
            "held 1 GPU, used 0 of them, mean 0%; ended by the agent: idle accelerators");
}

TEST(JobReport, LiveFiguresSurviveTheStoredState) {
  JobSummary s = gpuJob(1);
  mergeEvent(s, "g1", GpuProgress{42, 30, GpuFigures{3, {device(0, 7, 9, 5, 1.5, 3)}}}, 5);
  auto again = fromStateJson(toStateJson(s));
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(again->live_gpu, s.live_gpu);
  EXPECT_EQ(toCommentJson(s).find("live"), std::string::npos) << "not part of AdminComment";
}

TEST(JobReport, AJobOnManyNodesStaysWithinTheMessageSize) {
  JobSummary s;
  s.job_id = 42;
  for (int i = 0; i < 400; ++i) {
    const std::string n = "gpu-node-" + std::to_string(i);
    mergeEvent(s, n, PrologStarted{42, 1000, "alice", "", 0});
    end(s, {device(0, 1, 2, 3, 4), device(1, 1, 2, 3, 4)}, n);
  }
  const auto text = reportText(s);
  EXPECT_LE(text.size(), kMaxReportBytes);
  const auto r = nlohmann::json::parse(text);
  EXPECT_EQ(r["devices"].size() + r["devices_left_out"].get<size_t>(), 800u);
  EXPECT_EQ(r["nodes"].size() + r["nodes_left_out"].get<size_t>(), 400u);
}

}  // namespace
}  // namespace accel::aggregator
