#include "accel/spank/daemon_messages.h"

#include "accel/ipc/control_verify.h"
#include "accel/schemas/control_generated.h"

namespace accel::spank {
namespace {

namespace fb = accel::control;

Outcome outcomeOf(fb::Outcome o) {
  switch (o) {
    case fb::Outcome::Ok:
      return Outcome::kOk;
    case fb::Outcome::BadRequest:
      return Outcome::kBadRequest;
    case fb::Outcome::PermissionDenied:
      return Outcome::kPermissionDenied;
    case fb::Outcome::NotFound:
      return Outcome::kNotFound;
    case fb::Outcome::UserError:
      return Outcome::kUserError;
    case fb::Outcome::NodeFault:
      return Outcome::kNodeFault;
    case fb::Outcome::Busy:
      return Outcome::kBusy;
  }
  // A newer daemon may add outcomes; the plugin treats them as failures.
  return Outcome::kUnknown;
}

std::string str(const flatbuffers::String* s) { return s == nullptr ? std::string() : s->str(); }

JobView jobViewOf(const fb::JobInfo& info) {
  JobView view;
  view.failed = info.state() == fb::JobState::Failed;
  const char* name = fb::EnumNameJobState(info.state());
  view.state =
      (name != nullptr && *name != '\0') ? name : std::to_string(static_cast<int>(info.state()));
  view.last_error = str(info.last_error());
  if (info.env() != nullptr) {
    for (const auto* var : *info.env()) {
      if (var == nullptr || var->name() == nullptr || var->name()->size() == 0) continue;
      view.env.emplace_back(var->name()->str(), str(var->value()));
    }
  }
  if (info.warnings() != nullptr) {
    for (const auto* line : *info.warnings())
      if (line != nullptr && line->size() > 0) view.warnings.push_back(line->str());
  }
  return view;
}

}  // namespace

Result<DaemonReply> decodeReply(std::span<const std::uint8_t> bytes) {
  auto verified = ipc::verifyReply(bytes);
  if (!verified.ok()) return Error(ErrorCode::kParse, "accel-agentd's reply failed verification");
  const fb::Reply* r = *verified;
  DaemonReply out;
  out.outcome = outcomeOf(r->outcome());
  out.message = str(r->message());
  if (const auto* info = r->body_as_JobInfo()) out.job = jobViewOf(*info);
  return out;
}

const char* outcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "Ok";
    case Outcome::kBadRequest:
      return "BadRequest";
    case Outcome::kPermissionDenied:
      return "PermissionDenied";
    case Outcome::kNotFound:
      return "NotFound";
    case Outcome::kUserError:
      return "UserError";
    case Outcome::kNodeFault:
      return "NodeFault";
    case Outcome::kBusy:
      return "Busy";
    case Outcome::kUnknown:
      break;
  }
  return "Unknown";
}

}  // namespace accel::spank
