// The vendor clients' output parsers on arbitrary bytes: `csctl get jobs -o
// json` and `vipu get partition --ipu-configs`. Whatever they accept must
// hold what the agent relies on (valid ids, GCDs 0..n-1 in order).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "accel/appliance/csctl_cli.h"
#include "accel/ipu/vipu_cli.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto jobs = accel::appliance::parseCsctlJobs(text); jobs.ok()) {
    for (const auto& j : *jobs) {
      if (j.slurm_job_id == 0) std::abort();
      // A readable entry has a valid id; an unreadable one a valid id or none.
      if (!accel::appliance::isValidJobId(j.id) && (j.unreadable.empty() || !j.id.empty()))
        std::abort();
    }
  }
  if (auto gcds = accel::ipu::parseIpuConfigs(text, "p1"); gcds.ok()) {
    for (size_t i = 0; i < gcds->size(); ++i)
      if ((*gcds)[i].gcd != i || (*gcds)[i].config.empty()) std::abort();
  }
  (void)accel::appliance::parseRfc3339(text);
  return 0;
}
