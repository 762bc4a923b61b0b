#pragma once
// Every control message read is checked here first, before any of its fields
// is read: the FlatBuffers verifier, bounded in depth and in tables
// (schemas/README.md, rule 6). The daemon verifies requests; accelctl, the
// SPANK plugin and the daemon's own stale-job sweep verify replies. What
// comes back points into `bytes`, which must outlive it.
#include <cstdint>
#include <span>

#include "accel/common/result.h"
#include "accel/schemas/control_generated.h"

namespace accel::ipc {

// The request in `bytes`: verified, version 1, with a body. kInvalidArgument
// otherwise, with the reason ("request failed verification", "unsupported
// request version N", "request has no body").
Result<const control::Request*> verifyRequest(std::span<const uint8_t> bytes);

// The reply in `bytes`, verified; kParse otherwise.
Result<const control::Reply*> verifyReply(std::span<const uint8_t> bytes);

}  // namespace accel::ipc
