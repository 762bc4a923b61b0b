#pragma once
// The event outbox's slice of accel.conf: the outbox itself (ipc/events)
// takes OutboxOptions and never sees the configuration.
#include <string>

#include "accel/common/config.h"
#include "accel/common/result.h"
#include "accel/events/outbox.h"

namespace accel::agentd {

// From accel.conf: AggregatorAddress (unset: events are only spooled),
// AggregatorPublicKeyFile, NodeKeyFile (refused when group or others can
// read it), the link's Aggregator* timings, EventSpoolDir (default
// StateDir/spool) and EventSpoolMaxSize. Errors name the key file or the
// keys at fault.
Result<event::OutboxOptions> outboxOptionsFrom(const AccelConfig& config, const std::string& node);

}  // namespace accel::agentd
