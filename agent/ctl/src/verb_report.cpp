// accelctl report JOB [--json]: the job's accelerator report, asked of the
// aggregator through this node's agent (as `events --job` is): one
// ReportRequest, one JobReport reply. The job's owner, root and SlurmUser
// may read it; anyone else gets the answer of a job that does not exist.
#include <charconv>

#include "accel/ctl/client.h"
#include "accel/ctl/hints.h"
#include "accel/ctl/report_view.h"
#include "accel/ipc/control_requests.h"
#include "accel/ipc/control_verify.h"
#include "accel/schemas/control_generated.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;

// The one job id of the arguments, or 0.
uint32_t jobIdOf(const std::vector<std::string>& args) {
  uint32_t id = 0;
  if (args.size() != 1) return 0;
  const std::string& a = args[0];
  auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), id);
  return ec == std::errc() && end == a.data() + a.size() ? id : 0;
}

}  // namespace

int verbReport(const std::vector<std::string>& args, const GlobalOptions& g, const CliIo& io) {
  const uint32_t id = jobIdOf(args);
  if (id == 0) {
    io.err(args.empty() ? std::string("accelctl: report needs a job id, e.g. accelctl report 42")
           : args.size() > 1
               ? "accelctl: report takes one job id, not " + std::to_string(args.size()) +
                     " arguments; usage: accelctl report ID [--json]"
               : "accelctl: report: '" + args[0] +
                     "' is not a job id (a number from 1 up, e.g. accelctl report 42)");
    return kUsage;
  }
  int code = 0;
  auto conn = sendToAgent(g, io, "report", ipc::encodeReportRequest(id), &code);
  if (!conn) return code;
  // The agent gives up on the aggregator after its own limit (10 s).
  auto msg = ipc::recvMessage(*conn, std::chrono::seconds(30));
  if (!msg.ok()) {
    io.err("accelctl: report: " + msg.error().message());
    return exitForCallError(msg.error());
  }
  auto verified = ipc::verifyReply(*msg);
  if (!verified.ok()) {
    io.err("accelctl: report: the agent's reply failed verification");
    return kNodeFault;
  }
  const fb::Reply* r = *verified;
  if (r->outcome() != fb::Outcome::Ok) {
    io.err("accelctl: report: " + (r->message() ? r->message()->str() : std::string("refused")));
    return exitForOutcome(static_cast<uint8_t>(r->outcome()));
  }
  const auto* report = r->body_as_JobReport();
  if (!report || !report->json()) {
    io.err("accelctl: report: the agent sent no report");
    return kNodeFault;
  }
  if (g.json) {
    io.out(report->json()->str() + "\n");
    return kOk;
  }
  auto text = reportTable(report->json()->str());
  if (!text.ok()) {
    io.err("accelctl: report: " + text.error().message());
    return kNodeFault;
  }
  io.out(*text);
  return kOk;
}

}  // namespace accel::ctl
