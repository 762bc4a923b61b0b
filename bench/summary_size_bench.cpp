// Bytes a job's GPU figures add to its summary in AdminComment, for 1 to 8
// GPUs on one node, against the same job's summary without them (the
// baseline, computed in the same run by the same writer, toCommentJson).
// Two shapes of job: a day at full load (the largest figures a device gives:
// 99% busy, 140 GiB, 60 MJ, 8,640 samples) and ten minutes at half load.
// Output: one line per case, "gpus=N job=KIND without=B with=B added=B ratio=R".
// Not a test: it asserts nothing (the bound is GpuSummary.EightGpusAddAtMost600Bytes).
#include <cstdio>
#include <string>

#include "accel/aggregator/summary.h"

namespace {

using namespace accel;

struct Shape {
  const char* name;
  uint64_t samples;
  float mean_pct;
  uint32_t max_pct;
  uint64_t memory_mib;
  double energy_j;
};

void measure(uint32_t gpus, const Shape& shape) {
  const std::string node = "gpu-node-0001";
  aggregator::JobSummary s;
  s.job_id = 42;
  aggregator::mergeEvent(s, node, event::PrologStarted{42, 1000, "user", node, 1});
  event::PrologFinished started{42};
  started.accel_kind = "gpu";
  for (uint32_t i = 0; i < gpus; ++i) started.devices.push_back("cuda" + std::to_string(i));
  aggregator::mergeEvent(s, node, started);
  event::EpilogFinished ended{42};
  aggregator::mergeEvent(s, node, ended);
  const size_t without = aggregator::toCommentJson(s).size();
  event::GpuFigures figures;
  figures.samples = shape.samples;
  for (uint32_t i = 0; i < gpus; ++i) {
    event::GpuDeviceFigures d;
    d.index = i;
    d.samples = shape.samples;
    d.util_mean_pct = shape.mean_pct;
    d.util_max_pct = shape.max_pct;
    d.memory_used_max_mib = shape.memory_mib;
    d.energy_j = shape.energy_j;
    figures.devices.push_back(d);
  }
  ended.gpu = figures;
  aggregator::mergeEvent(s, node, ended);
  const size_t with = aggregator::toCommentJson(s).size();
  std::printf("gpus=%u job=%s without=%zu with=%zu added=%zu ratio=%.2f\n", gpus, shape.name,
              without, with, with - without, double(with) / double(without));
}

}  // namespace

int main() {
  const Shape shapes[] = {{"day-full-load", 8640, 99.4F, 100, 143771, 60'480'000.0},
                          {"ten-minutes-half-load", 60, 48.2F, 97, 40960, 252'000.4}};
  for (uint32_t gpus = 1; gpus <= 8; ++gpus)
    for (const Shape& shape : shapes) measure(gpus, shape);
  return 0;
}
