#include "accel/agentd/stale_jobs.h"

#include <flatbuffers/flatbuffers.h>

#include "accel/common/log.h"
#include "accel/schemas/control_generated.h"

namespace accel::agentd {
namespace {

namespace fb = accel::control;

std::vector<uint8_t> epilogRequest(uint32_t job_id, uint32_t uid) {
  flatbuffers::FlatBufferBuilder fbb(128);
  fbb.Finish(fb::CreateRequest(fbb, 1, fb::RequestBody::EpilogRequest, fb::CreateEpilogRequest(fbb, job_id, uid).Union()),
             fb::RequestIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

}  // namespace

StaleSweep sweepStaleJobs(const HandlerContext& ctx, const PresenceFn& presence, const std::function<bool()>& stop) {
  StaleSweep sweep;
  for (const auto& rec : ctx.manager->jobs()) {
    if (stop && stop()) break;
    const uint32_t id = rec.spec.job_id;
    const std::string job = "job " + std::to_string(id);
    ++sweep.asked;
    auto p = presence(id);
    if (!p.ok()) {
      log::warning("stale jobs: cannot ask slurmctld about " + job + " (" + p.error().message() +
                   "); keeping every re-adopted job until its epilog comes");
      sweep.slurmctld_unavailable = true;
      break;
    }
    if (*p == JobPresence::kAlive) continue;
    log::warning("stale jobs: " + job +
                 " is over in Slurm but its epilog never reached the agent; cleaning what its prolog made");
    auto bytes = epilogRequest(id, rec.spec.uid);
    auto reply = handleRequest(ctx, Caller{.uid = 0, .pid = 0}, bytes);
    const auto* r = flatbuffers::GetRoot<fb::Reply>(reply.data());
    if (r->outcome() == fb::Outcome::Ok) {
      ++sweep.cleaned;
    } else {
      ++sweep.failed;
      log::error("stale jobs: " + job + ": cleaning failed: " + (r->message() ? r->message()->str() : ""));
    }
  }
  return sweep;
}

}  // namespace accel::agentd
