#include "accel/agentd/stale_jobs.h"

#include <thread>

#include "accel/common/log.h"
#include "accel/ipc/control_requests.h"
#include "accel/ipc/control_verify.h"
#include "accel/schemas/control_generated.h"

namespace accel::agentd {
namespace {

namespace fb = accel::control;

// Finishes the epilog of a job that is over; counts the outcome.
void clean(const HandlerContext& ctx, const agent::JobRecord& rec, StaleSweep& sweep) {
  const std::string job = "job " + std::to_string(rec.spec.job_id);
  log::warning(
      "stale jobs: " + job +
      " is over in Slurm but its epilog never reached the agent; cleaning what its prolog made");
  auto bytes = ipc::encodeEpilogRequest(rec.spec.job_id, rec.spec.uid);
  auto reply = handleRequest(ctx, Caller{.uid = 0, .pid = 0}, bytes);
  auto verified = ipc::verifyReply(reply);
  const fb::Reply* r = verified.ok() ? *verified : nullptr;
  if (r != nullptr && r->outcome() == fb::Outcome::Ok) {
    ++sweep.cleaned;
  } else {
    ++sweep.failed;
    log::error("stale jobs: " + job +
               ": cleaning failed: " + (r && r->message() ? r->message()->str() : ""));
  }
}

bool sleepFor(std::chrono::milliseconds d, const std::function<bool()>& stop) {
  auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
    if (stop && stop()) return false;
    std::this_thread::sleep_for(
        std::min<std::chrono::milliseconds>(d, std::chrono::milliseconds(100)));
  }
  return !(stop && stop());
}

}  // namespace

StaleSweep sweepStaleJobs(const HandlerContext& ctx, const PresenceFn& presence,
                          const std::function<bool()>& stop,
                          std::chrono::milliseconds confirm_after,
                          const std::function<bool(std::chrono::milliseconds)>& sleep) {
  StaleSweep sweep;
  std::vector<uint32_t> unknown;
  for (const auto& rec : ctx.manager->jobs()) {
    if (stop && stop()) return sweep;
    const uint32_t id = rec.spec.job_id;
    ++sweep.asked;
    auto p = presence(id);
    if (!p.ok()) {
      log::warning("stale jobs: cannot ask slurmctld about job " + std::to_string(id) + " (" +
                   p.error().message() + "); keeping every re-adopted job until its epilog comes");
      sweep.slurmctld_unavailable = true;
      return sweep;
    }
    if (*p == JobPresence::kGone)
      clean(ctx, rec, sweep);
    else if (*p == JobPresence::kUnknown)
      unknown.push_back(id);
  }
  if (unknown.empty()) return sweep;
  log::info("stale jobs: slurmctld does not know " + std::to_string(unknown.size()) +
            " re-adopted jobs; asking again in " + std::to_string(confirm_after.count() / 1000) +
            " s");
  bool waited = sleep ? sleep(confirm_after) : sleepFor(confirm_after, stop);
  if (!waited) return sweep;
  for (uint32_t id : unknown) {
    if (stop && stop()) break;
    auto rec = ctx.manager->job(id);
    if (!rec) continue;  // its epilog came meanwhile
    auto p = presence(id);
    if (!p.ok()) {
      sweep.slurmctld_unavailable = true;
      break;
    }
    if (*p == JobPresence::kAlive) {
      ++sweep.unconfirmed;
      log::warning("stale jobs: job " + std::to_string(id) +
                   " was unknown to slurmctld, then alive; kept");
      continue;
    }
    clean(ctx, *rec, sweep);
  }
  return sweep;
}

}  // namespace accel::agentd
