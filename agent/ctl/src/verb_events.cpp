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

int exitFor(fb::Outcome o) {
  switch (o) {
    case fb::Outcome::Ok:
      return kOk;
    case fb::Outcome::NotFound:
      return kNotFound;
    case fb::Outcome::PermissionDenied:
      return kDenied;
    case fb::Outcome::Busy:
      return kUnavailable;
    case fb::Outcome::BadRequest:
      return kUsage;
    default:
      return kNodeFault;
  }
}

}  // namespace

int eventsThroughAgent(const EventsArgs& args, const GlobalOptions& g, const CliIo& io) {
  auto path = configPath(g, io);
  auto config = path.ok() ? loadAccelConfig(*path) : Result<AccelConfig>(path.error());
  if (!config.ok()) {
    io.err("accelctl: " + configErrorHint(config.error()));
    return kUsage;
  }
  auto conn = connectDaemon(*config);
  if (!conn.ok()) {
    io.err("accelctl: " + callErrorHint(conn.error(), config->control_socket, *path));
    return exitForCallError(conn.error());
  }
  const auto req = ipc::encodeEventsRequest(args.job_id, args.node, args.follow, g.json);
  if (auto sent = ipc::sendMessage(*conn, req.data(), req.size(), std::chrono::seconds(2));
      !sent.ok()) {
    io.err("accelctl: events: " + sent.error().message());
    return exitForCallError(sent.error());
  }
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
      return exitFor(r->outcome());
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
