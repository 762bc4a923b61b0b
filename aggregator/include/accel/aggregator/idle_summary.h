#pragma once
// Idle accelerators in a job's summary: each node's job_idle event (the
// agent's IdleAfter found every GPU of the job there at 0%), kept in the
// stored state and written into AdminComment (docs/accounting-format.md,
// "idle" and "ended").
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "accel/events/event.h"

namespace accel::aggregator {

// node -> its job_idle event (one per job and node; a resend replaces it).
using IdleNotes = std::map<std::string, event::JobIdle>;

// Keeps `node`'s event. Returns whether anything changed.
bool mergeIdle(IdleNotes& notes, const std::string& node, const event::JobIdle& e);

// Whether some node cancelled the job for idle accelerators.
bool endedIdle(const IdleNotes& notes);

// The words of the comment's "ended" for a job some node cancelled as idle.
inline constexpr const char* kEndedIdle = "idle accelerators";

// The state's form; idleFromState throws nlohmann::json::exception on a
// wrong shape, as the other state readers do.
nlohmann::json idleToState(const IdleNotes& notes);
IdleNotes idleFromState(const nlohmann::json& j);

// The comment's form: {"node": {"idle_s": N, "gpus": [index, ...],
// "action": "none"|"notify"|"cancel"|"cancel_failed"}}.
nlohmann::ordered_json idleToComment(const IdleNotes& notes);

}  // namespace accel::aggregator
