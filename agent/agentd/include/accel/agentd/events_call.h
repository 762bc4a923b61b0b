#pragma once
// An `accelctl events --job` call as the control handler reads it and the
// event relay answers it (control_handler.h, event_relay.h).
#include <cstdint>
#include <string>

namespace accel::agentd {

struct EventsCall {
  uint32_t job_id = 0;
  std::string node;  // only this node's events; empty: all
  bool follow = false;
  bool json = false;
  // `accelctl report`: one ReportAsk for the job's report (job_id alone
  // counts), answered with one JobReport reply.
  bool report = false;
};

}  // namespace accel::agentd
