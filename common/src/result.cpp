#include "accel/common/result.h"

#include <cstring>

namespace accel {

const char* errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kPermissionDenied:
      return "permission denied";
    case ErrorCode::kIo:
      return "i/o error";
    case ErrorCode::kParse:
      return "parse error";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kTimeout:
      return "timed out";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kInternal:
      return "internal error";
  }
  return "unknown error";
}

Error sysError(const std::string& what, int err) {
  ErrorCode code = ErrorCode::kIo;
  if (err == ENOENT) code = ErrorCode::kNotFound;
  if (err == EACCES || err == EPERM) code = ErrorCode::kPermissionDenied;
  if (err == ETIMEDOUT) code = ErrorCode::kTimeout;
  return Error(code, what + ": " + std::strerror(err));
}

}  // namespace accel
