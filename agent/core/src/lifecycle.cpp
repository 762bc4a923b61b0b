#include "accel/agent/lifecycle.h"

#include <array>

namespace accel::agent {
namespace {

struct Edge {
  JobPhase from;
  JobEvent event;
  JobPhase to;
};

constexpr std::array kEdges{
    Edge{JobPhase::kNone, JobEvent::kPrologBegin, JobPhase::kProlog},
    Edge{JobPhase::kProlog, JobEvent::kPrologBegin, JobPhase::kProlog},
    Edge{JobPhase::kFailed, JobEvent::kPrologBegin, JobPhase::kProlog},
    Edge{JobPhase::kCleaned, JobEvent::kPrologBegin, JobPhase::kProlog},
    Edge{JobPhase::kProlog, JobEvent::kPrologOk, JobPhase::kReady},
    Edge{JobPhase::kProlog, JobEvent::kPrologFail, JobPhase::kFailed},
    Edge{JobPhase::kNone, JobEvent::kEpilogBegin, JobPhase::kEpilog},
    Edge{JobPhase::kProlog, JobEvent::kEpilogBegin, JobPhase::kEpilog},
    Edge{JobPhase::kReady, JobEvent::kEpilogBegin, JobPhase::kEpilog},
    Edge{JobPhase::kFailed, JobEvent::kEpilogBegin, JobPhase::kEpilog},
    Edge{JobPhase::kEpilog, JobEvent::kEpilogBegin, JobPhase::kEpilog},
    Edge{JobPhase::kCleaned, JobEvent::kEpilogBegin, JobPhase::kEpilog},
    Edge{JobPhase::kEpilog, JobEvent::kEpilogOk, JobPhase::kCleaned},
    Edge{JobPhase::kEpilog, JobEvent::kEpilogFail, JobPhase::kFailed},
};

constexpr std::array<std::string_view, 6> kPhaseNames{"none",   "prolog",  "ready",
                                                      "epilog", "cleaned", "failed"};
constexpr std::array<std::string_view, 6> kEventNames{"prolog_begin", "prolog_ok", "prolog_fail",
                                                      "epilog_begin", "epilog_ok", "epilog_fail"};

}  // namespace

std::optional<JobPhase> transition(JobPhase from, JobEvent event) {
  for (const auto& e : kEdges)
    if (e.from == from && e.event == event) return e.to;
  return std::nullopt;
}

std::string_view phaseName(JobPhase phase) { return kPhaseNames[static_cast<size_t>(phase)]; }
std::string_view eventName(JobEvent event) { return kEventNames[static_cast<size_t>(event)]; }

std::optional<JobPhase> parsePhase(std::string_view name) {
  for (size_t i = 0; i < kPhaseNames.size(); ++i)
    if (kPhaseNames[i] == name) return static_cast<JobPhase>(i);
  return std::nullopt;
}

bool holdsResources(JobPhase phase) {
  return phase == JobPhase::kProlog || phase == JobPhase::kReady || phase == JobPhase::kEpilog ||
         phase == JobPhase::kFailed;
}

}  // namespace accel::agent
