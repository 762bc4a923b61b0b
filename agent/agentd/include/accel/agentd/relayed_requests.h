#pragma once
// The control requests this node's agent does not answer itself but hands to
// the event relay, which asks the aggregator (AggregatorQueryAddress):
// `accelctl events --job` and `accelctl report`.
#include "accel/agentd/control_handler.h"
#include "accel/schemas/control_generated.h"

namespace accel::agentd {

// An EventsRequest: to the relay when the node has one, else a BadRequest
// reply saying how to read the events instead.
Dispatched relayEvents(const HandlerContext& ctx, const control::EventsRequest* e);
// A ReportRequest: to the relay as well; the aggregator composes the report.
Dispatched relayReport(const HandlerContext& ctx, const control::ReportRequest* r);

}  // namespace accel::agentd
