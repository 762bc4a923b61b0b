#pragma once
// Where the control handlers send job events, and what `accelctl status`
// says of the event stream. accel-agentd's own is OutboxEvents, below; tests
// record (tests/support/recording_events.h).
#include <optional>
#include <string>
#include <utility>

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

// Publishes `e`; an event the spool cannot take is logged, not an error: a
// job must not fail because accounting is behind.
void publishOrLog(event::Outbox& outbox, const event::Event& e);

class ApplianceService;

// The daemon's JobEvents: to the outbox, except a surrogate step's report
// beyond what its appliance job allows (the job's user sends those, as often
// as they like).
class OutboxEvents final : public JobEvents {
 public:
  OutboxEvents(event::Outbox& outbox, ApplianceService& appliance, std::string aggregator)
      : outbox_(outbox), appliance_(appliance), aggregator_(std::move(aggregator)) {}
  void emit(const event::Event& e) override;
  std::optional<event::OutboxStats> stats() const override { return outbox_.stats(); }
  std::string aggregator() const override { return aggregator_; }

 private:
  event::Outbox& outbox_;
  ApplianceService& appliance_;
  const std::string aggregator_;
};

}  // namespace accel::agentd
