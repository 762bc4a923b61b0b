#pragma once
// Where the control handlers send job events, and what `accelctl status`
// says of the event stream. accel-agentd's own publishes to its outbox
// (daemon.cpp); tests record (tests/support/recording_events.h).
#include <optional>
#include <string>

#include "accel/events/event.h"
#include "accel/events/outbox.h"

namespace accel::agentd {

class JobEvents {
 public:
  virtual ~JobEvents() = default;
  // Never blocks. An event that cannot be spooled is logged, never an error
  // of the request that caused it.
  virtual void emit(const event::Event& e) = 0;
  // The outbox's counters; nullopt: there is no outbox.
  virtual std::optional<event::OutboxStats> stats() const = 0;
  // AggregatorAddress; empty: events are only spooled.
  virtual std::string aggregator() const = 0;
};

}  // namespace accel::agentd
