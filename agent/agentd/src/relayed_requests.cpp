#include "accel/agentd/relayed_requests.h"

#include <string>

namespace accel::agentd {
namespace {

namespace fb = accel::control;

Dispatched badRequest(const std::string& message) {
  return Dispatched{errorReply(static_cast<uint8_t>(fb::Outcome::BadRequest), message), {}};
}

}  // namespace

Dispatched relayEvents(const HandlerContext& ctx, const fb::EventsRequest* e) {
  if (!ctx.relay_events)
    return badRequest(
        "this node's agent has no AggregatorQueryAddress in its accel.conf; read the events "
        "where the aggregator's database is (accelctl events --database PATH)");
  const std::string node = e->node() ? e->node()->str() : std::string();
  if (node.size() > 255) return badRequest("node name longer than 255 characters");
  return Dispatched{{}, EventsCall{e->job_id(), node, e->follow(), e->json()}};
}

Dispatched relayReport(const HandlerContext& ctx, const fb::ReportRequest* r) {
  if (!ctx.relay_events)
    return badRequest(
        "this node's agent has no AggregatorQueryAddress in its accel.conf, so it cannot ask "
        "the aggregator for a job's report");
  EventsCall call;
  call.job_id = r->job_id();
  call.report = true;
  return Dispatched{{}, call};
}

}  // namespace accel::agentd
