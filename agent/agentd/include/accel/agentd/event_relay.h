#pragma once
// `accelctl events --job ID` on any node: the agent asks accel-aggregatord
// (AggregatorQueryAddress, schemas/query.fbs) on behalf of the caller it
// took from its control socket, vouching for the caller's uid from the
// kernel's peer credentials, and passes the answers on as EventLines replies
// on the caller's connection. With --follow the caller is subscribed: each
// ask after the first is held by the aggregator until the job has newer
// events, and the next is sent only once the caller has taken the last
// answer, so a slow reader slows only its own stream.
//
// One thread owns the DEALER socket and every caller's connection. A caller
// who closes its connection ends its stream; the aggregator's hold on its
// last ask then times out on its own.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "accel/agentd/events_call.h"
#include "accel/common/result.h"
#include "accel/events/curve_keys.h"
#include "accel/ipc/control_socket.h"

namespace accel::agentd {

struct RelayOptions {
  std::string endpoint;  // AggregatorQueryAddress
  std::string server_public_key;
  event::CurveKeyPair client_keys;
  size_t max_calls = 64;         // callers relayed at once
  size_t max_calls_per_uid = 4;  // ... for one uid other than root and SlurmUser
  // An answer to an ask that is not held must come within this; a held one
  // within the aggregator's hold (20 s) and this.
  std::chrono::milliseconds answer_timeout{10000};
  std::chrono::milliseconds hold_timeout{20000};
};

class EventRelay {
 public:
  static Result<std::unique_ptr<EventRelay>> start(const RelayOptions& options);
  ~EventRelay();  // closes every caller's connection
  EventRelay(const EventRelay&) = delete;
  EventRelay& operator=(const EventRelay&) = delete;

  // Takes over the caller's connection and answers on it from now on. Over
  // the limits, the caller is answered Busy here and the connection closed.
  void adopt(ipc::Socket conn, uid_t uid, bool admin, const EventsCall& call);
  // Callers being answered now.
  size_t calls() const;

  struct Impl;

 private:
  explicit EventRelay(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accel::agentd
