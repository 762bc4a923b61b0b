#pragma once
// The control requests' side of the GPU faults (gpu_xids.h): what `accelctl
// status` shows of them, and `accelctl clear-fault`.
#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <vector>

#include "accel/agentd/control_handler.h"
#include "accel/schemas/control_generated.h"

namespace accel::agentd {

// StatusInfo's gpu_faults: every fault kept, newest last (empty: none, or
// no monitor).
std::vector<flatbuffers::Offset<control::TimedError>> gpuFaultsStatus(
    flatbuffers::FlatBufferBuilder& fbb, const HandlerContext& ctx);

// The reply to a ClearFaultRequest (the route lets root and SlurmUser
// alone through): how many faults were forgotten, or why they could not be.
std::vector<uint8_t> clearFaultReply(const HandlerContext& ctx);

}  // namespace accel::agentd
