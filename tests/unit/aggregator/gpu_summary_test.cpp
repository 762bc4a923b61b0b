// What a job did with its GPUs, in its summary: each node's figures from its
// epilog, kept per node, written compactly into the comment (a bounded size
// for 8 GPUs) and in full into the stored state.
#include "accel/aggregator/gpu_summary.h"

#include <gtest/gtest.h>

#include "accel/aggregator/summary.h"

namespace accel::aggregator {
namespace {

using namespace accel::event;

GpuDeviceFigures device(uint32_t index, float mean, uint32_t max, uint64_t mib, double joules) {
  GpuDeviceFigures d;
  d.index = index;
  d.pci_bus_id = "0000:" + std::to_string(0x18 + index) + ":00.0";
  d.uuid = "GPU-" + std::to_string(index);
  d.samples = 12;
  d.util_mean_pct = mean;
  d.util_max_pct = max;
  d.memory_used_max_mib = mib;
  d.energy_j = joules;
  return d;
}

EpilogFinished epilogWith(std::vector<GpuDeviceFigures> devices) {
  EpilogFinished e{42};
  e.gpu = GpuFigures{12, std::move(devices), {}, 0};
  return e;
}

// A GPU job of two nodes: both nodes' devices, each under its node, in the
// comment's compact rows (index, mean %, max %, MiB, J, samples).
TEST(GpuSummary, TwoNodesFiguresAreKeptPerNodeAndWrittenCompactly) {
  JobSummary s;
  s.job_id = 42;
  mergeEvent(s, "g1", PrologStarted{42, 1000, "alice", "g[1-2]", 2});
  mergeEvent(s, "g2", PrologStarted{42, 1000, "alice", "g[1-2]", 2});
  mergeEvent(s, "g1",
             epilogWith({device(1, 0.0F, 0, 0, 710.4), device(0, 31.4F, 87, 40960, 12345.6)}));
  GpuDeviceFigures unread;
  unread.index = 0;
  mergeEvent(s, "g2", epilogWith({unread}));
  ASSERT_EQ(s.gpu.size(), 2u);
  EXPECT_EQ(s.gpu.at("g1").front().index, 0u) << "by device index";
  const std::string comment = toCommentJson(s);
  EXPECT_NE(
      comment.find(
          R"("gpu":{"g1":[[0,31,87,40960,12346,12],[1,0,0,0,710,12]],"g2":[[0,0,0,-1,-1,0]]})"),
      std::string::npos)
      << comment;
  // The stored state keeps every field, and reads back the same.
  auto again = fromStateJson(toStateJson(s));
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(again->gpu, s.gpu);
  // A job without GPU figures has no "gpu" key in either.
  JobSummary plain;
  plain.job_id = 43;
  mergeEvent(plain, "g1", EpilogFinished{43});
  EXPECT_EQ(toCommentJson(plain).find("gpu"), std::string::npos);
  EXPECT_EQ(toStateJson(plain).find("gpu"), std::string::npos);
}

// An 8-GPU job adds at most about 600 bytes to its comment, with the largest
// figures a device gives (a day at 700 W is about 60 MJ).
TEST(GpuSummary, EightGpusAddAtMost600Bytes) {
  JobSummary s;
  s.job_id = 42;
  mergeEvent(s, "gpu-node-0001", EpilogFinished{42});
  const size_t without = toCommentJson(s).size();
  std::vector<GpuDeviceFigures> eight;
  for (uint32_t i = 0; i < 8; ++i) eight.push_back(device(i, 99.5F, 100, 143771, 60'480'000.0));
  for (auto& d : eight) d.samples = 8640;  // a day at 10 s
  mergeEvent(s, "gpu-node-0001", epilogWith(eight));
  const size_t with = toCommentJson(s).size();
  EXPECT_LE(with - without, 600u) << toCommentJson(s);
  EXPECT_GT(with - without, 8 * 20u) << "every device is in it";
}

// A later epilog of the node (a resend, or its next run) replaces its
// figures; the same again changes nothing. More than 16 devices are cut.
TEST(GpuSummary, ALaterEpilogReplacesTheNodesFigures) {
  GpuUse use;
  EXPECT_TRUE(mergeGpu(use, "g1", GpuFigures{1, {device(0, 10.0F, 20, 100, 5.0)}, {}, 0}));
  EXPECT_FALSE(mergeGpu(use, "g1", GpuFigures{1, {device(0, 10.0F, 20, 100, 5.0)}, {}, 0}));
  EXPECT_TRUE(mergeGpu(use, "g1", GpuFigures{2, {device(0, 50.0F, 90, 200, 9.0)}, {}, 0}));
  EXPECT_EQ(use.at("g1").front().util_max_pct, 90u);
  std::vector<GpuDeviceFigures> many;
  for (uint32_t i = 0; i < 20; ++i) many.push_back(device(i, 1.0F, 1, 1, 1.0));
  mergeGpu(use, "g2", GpuFigures{1, many, {}, 0});
  EXPECT_EQ(use.at("g2").size(), GpuFigures::kMaxDevices);
}

// A wrong shape in the stored state is an error, not a silent default.
TEST(GpuSummary, AStateOfTheWrongShapeIsRefused) {
  JobSummary s;
  s.job_id = 42;
  mergeEvent(s, "g1", epilogWith({device(0, 1.0F, 2, 3, 4.0)}));
  std::string text = toStateJson(s);
  const std::string good = R"("util_max_pct":2)";
  auto at = text.find(good);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, good.size(), R"("util_max_pct":"two")");
  EXPECT_FALSE(fromStateJson(text).ok());
}

}  // namespace
}  // namespace accel::aggregator
