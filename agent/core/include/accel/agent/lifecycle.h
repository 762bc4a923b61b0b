#pragma once
// A job's life on this node, as an explicit transition table:
//
//   none --prolog_begin--> prolog --prolog_ok--> ready --epilog_begin--> epilog
//   prolog --prolog_fail--> failed           epilog --epilog_ok--> cleaned
//   failed --epilog_begin--> epilog
//   epilog --epilog_fail--> failed (the epilog may be retried)
//   prolog --prolog_begin--> prolog (a retried prolog rolls back first)
//   failed --prolog_begin--> prolog (a retried prolog after a failed one)
//
// Every state change the daemon makes goes through `transition`, so an edge
// that is not in the table is a bug caught at once rather than a job stuck in
// a state nobody expected.
#include <optional>
#include <string_view>

namespace accel::agent {

enum class JobPhase { kNone, kProlog, kReady, kEpilog, kCleaned, kFailed };

enum class JobEvent { kPrologBegin, kPrologOk, kPrologFail, kEpilogBegin, kEpilogOk, kEpilogFail };

// The state after `event` in `from`, or nullopt when the table has no such edge.
std::optional<JobPhase> transition(JobPhase from, JobEvent event);

std::string_view phaseName(JobPhase phase);
std::optional<JobPhase> parsePhase(std::string_view name);
std::string_view eventName(JobEvent event);

// A job in this phase holds node resources (devices, directories, ...).
bool holdsResources(JobPhase phase);

}  // namespace accel::agent
