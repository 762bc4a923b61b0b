#include "accel/agentd/xid_handlers.h"

#include <string>

#include "accel/agentd/gpu_xids.h"
#include "accel/common/log.h"

namespace accel::agentd {

namespace fb = accel::control;

std::vector<flatbuffers::Offset<fb::TimedError>> gpuFaultsStatus(
    flatbuffers::FlatBufferBuilder& fbb, const HandlerContext& ctx) {
  std::vector<flatbuffers::Offset<fb::TimedError>> out;
  if (ctx.xids == nullptr) return out;
  // Node faults name a job id at most, never its user: everyone may read them.
  for (const auto& f : ctx.xids->faults())
    out.push_back(fb::CreateTimedErrorDirect(fbb, f.at_ns, f.message.c_str()));
  return out;
}

std::vector<uint8_t> clearFaultReply(const HandlerContext& ctx) {
  flatbuffers::FlatBufferBuilder fbb(256);
  fb::Outcome outcome = fb::Outcome::Ok;
  std::string message;
  if (ctx.xids == nullptr) {
    message = "this node reads no kernel log (KernelLog): it has no GPU faults to clear";
  } else if (auto n = ctx.xids->clear(); !n.ok()) {
    outcome = fb::Outcome::NodeFault;
    message = "clear-fault: " + n.error().message();
  } else {
    message = std::to_string(*n) + " GPU fault(s) cleared";
    if (*n > 0) log::warning("clear-fault: " + message + " by an operator");
  }
  fbb.Finish(fb::CreateReplyDirect(fbb, outcome, message.c_str()));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

}  // namespace accel::agentd
