#include "accel/ipc/control_verify.h"

#include <cstddef>
#include <string>

namespace accel::ipc {
namespace {

// Deep enough for every message of control.fbs. A request (anyone may send
// one) has few tables, so a hostile one costs little to refuse; a reply (from
// the root daemon, within kMaxMessageBytes) may list every job of the node.
flatbuffers::Verifier::Options bounds(size_t max_tables) {
  flatbuffers::Verifier::Options opts;
  opts.max_depth = 16;
  opts.max_tables = max_tables;
  return opts;
}

}  // namespace

Result<const control::Request*> verifyRequest(std::span<const uint8_t> bytes) {
  flatbuffers::Verifier v(bytes.data(), bytes.size(), bounds(4096));
  if (bytes.empty() || !control::VerifyRequestBuffer(v))
    return Error(ErrorCode::kInvalidArgument, "request failed verification");
  const auto* req = control::GetRequest(bytes.data());
  if (req->version() != 1)
    return Error(ErrorCode::kInvalidArgument,
                 "unsupported request version " + std::to_string(req->version()));
  // The verifier accepts a union whose type is set but whose table is absent;
  // every handler reads the table, so that is refused here, once.
  if (req->body() == nullptr) return Error(ErrorCode::kInvalidArgument, "request has no body");
  return req;
}

Result<const control::Reply*> verifyReply(std::span<const uint8_t> bytes) {
  flatbuffers::Verifier v(bytes.data(), bytes.size(), bounds(1000000));
  if (bytes.empty() || !v.VerifyBuffer<control::Reply>(nullptr))
    return Error(ErrorCode::kParse, "reply failed verification");
  return flatbuffers::GetRoot<control::Reply>(bytes.data());
}

}  // namespace accel::ipc
