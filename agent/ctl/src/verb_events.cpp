// accelctl events --job ID [--follow] through this node's agent: one
// EventsRequest, then EventLines replies on the same connection until one is
// marked done (never, with --follow: the caller ends it, e.g. with Ctrl-C).
#include <cstdio>

#include "accel/ctl/client.h"
#include "accel/ctl/hints.h"
#include "accel/ipc/control_requests.h"
#include "accel/ipc/control_verify.h"
#include "accel/schemas/control_generated.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;

}  // namespace

int eventsThroughAgent(const EventsArgs& args, const GlobalOptions& g, const CliIo& io) {
  int code = 0;
  auto conn =
      sendToAgent(g, io, "events",
                  ipc::encodeEventsRequest(args.job_id, args.node, args.follow, g.json), &code);
  if (!conn) return code;
  // The agent answers within its own limits (an aggregator that does not
  // answer is reported after 10 s); a follower waits as long as it likes.
  const auto wait = std::chrono::seconds(args.follow ? 3600 : 30);
  for (;;) {
    auto msg = ipc::recvMessage(*conn, wait);
    if (!msg.ok()) {
      if (args.follow && msg.error().code() == ErrorCode::kTimeout) continue;
      io.err("accelctl: events: " + msg.error().message());
      return exitForCallError(msg.error());
    }
    auto verified = ipc::verifyReply(*msg);
    if (!verified.ok()) {
      io.err("accelctl: events: the agent's reply failed verification");
      return kNodeFault;
    }
    const fb::Reply* r = *verified;
    if (r->outcome() != fb::Outcome::Ok) {
      io.err("accelctl: events: " + (r->message() ? r->message()->str() : std::string("refused")));
      return exitForOutcome(static_cast<uint8_t>(r->outcome()));
    }
    const auto* lines = r->body_as_EventLines();
    if (!lines) {
      io.err("accelctl: events: the agent sent no events");
      return kNodeFault;
    }
    if (lines->lines()) {
      std::string out;
      for (const auto* l : *lines->lines()) out.append(l->string_view()).push_back('\n');
      io.out(out);
      std::fflush(stdout);
    }
    if (lines->done()) return kOk;
  }
}

}  // namespace accel::ctl
