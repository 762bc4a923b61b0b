// The appliance poll on arbitrary listings: `csctl get jobs -o json` output
// parsed, attributed to the jobs live on the node and followed over two
// polls (the input's halves, split at the first NUL byte, else in the
// middle). Whatever the listing, an appliance job counts only for a Slurm
// job whose user submitted it, a job follows at most its cap of entries, an
// unreadable entry is never given a real appliance job's standing, and the
// budget stays sane.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "accel/agent/appliance_budget.h"
#include "accel/agent/appliance_watcher.h"
#include "accel/appliance/csctl_cli.h"
#include "fake_clock.h"

namespace {

using accel::appliance::ApplianceJob;

// Three live jobs of three users; uid 1002 is the user "bob" of job 2.
const std::vector<accel::agent::LiveJob> kLive = {
    {1, 1001, "alice"}, {2, 1002, "bob"}, {65, 1003, "carol"}};

const accel::agent::LiveJob* liveJob(uint32_t id) {
  for (const auto& l : kLive)
    if (l.id == id) return &l;
  return nullptr;
}

class Listing : public accel::appliance::ApplianceClient {
 public:
  std::string_view text;
  accel::Result<std::vector<ApplianceJob>> jobs() override {
    return accel::appliance::parseCsctlJobs(text);
  }
  accel::Status cancel(const std::string&) override { return accel::okStatus(); }
  std::string describe() const override { return "fuzz listing"; }
};

void checkOwned(const ApplianceJob& j) {
  const auto* l = liveJob(j.slurm_job_id);
  if (l == nullptr || !accel::appliance::ownedBy(j, l->uid, l->user)) std::abort();
  if (j.unreadable.empty()
          ? !accel::appliance::isValidJobId(j.id)
          : j.id != accel::agent::kUnreadableEntry && !accel::appliance::isValidJobId(j.id))
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  size_t cut = all.find('\0');
  if (cut == std::string_view::npos) cut = all.size() / 2;
  const std::string_view halves[2] = {all.substr(0, cut),
                                      all.substr(std::min(cut + 1, all.size()))};

  if (auto listed = accel::appliance::parseCsctlJobs(halves[0]); listed.ok()) {
    auto a = accel::agent::attribute(*listed, kLive);
    std::map<uint32_t, size_t> per_job;
    for (const auto& j : a.owned) {
      const auto* l = liveJob(j.slurm_job_id);
      if (l == nullptr || !accel::appliance::ownedBy(j, l->uid, l->user)) std::abort();
      if (++per_job[j.slurm_job_id] > accel::agent::kMaxApplianceJobsPerJob + 1) std::abort();
    }
    for (const auto& j : a.foreign) {
      const auto* l = liveJob(j.slurm_job_id);
      if (l == nullptr || accel::appliance::ownedBy(j, l->uid, l->user)) std::abort();
    }
  }

  auto client = std::make_shared<Listing>();
  accel::support::FakeClock clock(1'800'000'000'000'000'000);
  std::map<uint32_t, accel::agent::ApplianceBudget> budgets;
  accel::agent::ApplianceWatcher w(
      client, std::chrono::milliseconds(1000), [] { return kLive; },
      [&](const ApplianceJob& j) {
        checkOwned(j);
        (void)accel::agent::noteApplianceJob(budgets[j.slurm_job_id], j);
      },
      clock,
      [](const ApplianceJob& j) {
        const auto* l = liveJob(j.slurm_job_id);
        if (l == nullptr || accel::appliance::ownedBy(j, l->uid, l->user)) std::abort();
      });
  for (const auto& half : halves) {
    client->text = half;
    (void)w.pollOnce();
    clock.advance(5'000'000'000);
    for (const auto& l : kLive) {
      auto jobs = w.jobsOf(l.id);
      if (jobs.size() > accel::agent::kMaxApplianceJobsPerJob + 1) std::abort();
      for (const auto& j : jobs) checkOwned(j);
      if (w.secondsOf(l.id) < 0) std::abort();
    }
  }
  for (const auto& [id, b] : budgets)
    if (accel::agent::usedNs(b, clock.wallNs()) < 0) std::abort();
  return 0;
}
