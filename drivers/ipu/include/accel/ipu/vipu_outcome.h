#pragma once
// How the agent reads a finished `vipu` call: pure, so the rules are tested on
// literal results. Transient means "try again": the controller could not be
// reached, the client timed out or was killed.
#include "accel/exec/client_process.h"

namespace accel::ipu {

enum class VipuOutcome { kOk, kNotFound, kExists, kBadRequest, kRefused, kTransient };

VipuOutcome classifyVipu(const exec::ClientResult& result);

}  // namespace accel::ipu
