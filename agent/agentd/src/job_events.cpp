#include "accel/agentd/job_events.h"

#include <variant>

#include "accel/agentd/appliance_service.h"
#include "accel/common/log.h"

namespace accel::agentd {

void publishOrLog(event::Outbox& outbox, const event::Event& e) {
  auto s = outbox.publish(e);
  if (!s.ok())
    log::warning(std::string("events: ") + event::kindName(e) + " of job " +
                 std::to_string(event::jobIdOf(e)) + " not spooled: " + s.error().message());
}

void OutboxEvents::emit(const event::Event& e) {
  if (const auto* step = std::get_if<event::StepStarted>(&e);
      step && step->surrogate && !appliance_.eventAllowed(step->job_id))
    return;
  publishOrLog(outbox_, e);
}

}  // namespace accel::agentd
