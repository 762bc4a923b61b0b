#pragma once
// Errors as values. Result<T> has the shape of C++23's std::expected: it holds
// either a T or an Error. Library code returns these and never logs; the caller
// that decides what to do logs once (component, phase, cause).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace accel {

// What kind of failure this is; callers branch on it (e.g. a user error is
// never a node fault). Append only: the values are stable in messages.
enum class ErrorCode {
  kInvalidArgument,  // bad input from a person or a file
  kNotFound,         // something required is missing
  kPermissionDenied,
  kIo,     // a system call failed; the message carries errno's text
  kParse,  // malformed bytes or text
  kUnsupported,
  kTimeout,
  kUnavailable,  // a peer (daemon, controller) cannot be reached
  kConflict,     // the resource is held by someone else
  kInternal,
};

const char* errorCodeName(ErrorCode code);

class Error {
 public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefix context, outermost first: Error(kIo,"EACCES").context("state dir")
  // reads "state dir: EACCES".
  Error context(const std::string& what) const& { return Error(code_, what + ": " + message_); }
  Error context(const std::string& what) && {
    message_ = what + ": " + message_;
    return std::move(*this);
  }

 private:
  ErrorCode code_;
  std::string message_;
};

// Builds an Error carrying errno's text: sysError("open /x", errno).
Error sysError(const std::string& what, int err);

// Aborts with a message: for states that cannot happen unless the program is wrong.
[[noreturn]] inline void panic(const char* what, const char* file, int line) {
  std::fprintf(stderr, "accel: internal error: %s (%s:%d)\n", what, file, line);
  std::abort();
}
#define ACCEL_CHECK(cond)                                                    \
  do {                                                                       \
    if (!(cond)) ::accel::panic("check failed: " #cond, __FILE__, __LINE__); \
  } while (0)

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    check();
    return std::get<0>(v_);
  }
  const T& value() const& {
    check();
    return std::get<0>(v_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const {
    if (ok()) panic("error() on a Result that holds a value", __FILE__, __LINE__);
    return std::get<1>(v_);
  }

 private:
  void check() const {
    if (!ok())
      panic(("value() on a failed Result: " + std::get<1>(v_).message()).c_str(), __FILE__,
            __LINE__);
  }
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : e_(std::move(error)), failed_(true) {}  // NOLINT

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    if (ok()) panic("error() on a Result that holds a value", __FILE__, __LINE__);
    return e_;
  }
  // The same status, with `what` prefixed to a failure's message.
  Result<void> context(const std::string& what) const {
    return ok() ? Result<void>() : Result<void>(e_.context(what));
  }

 private:
  Error e_{ErrorCode::kInternal, ""};
  bool failed_ = false;
};

using Status = Result<void>;

inline Status okStatus() { return Status(); }

}  // namespace accel

// Early return of a failure: ACCEL_TRY(doThing()); works for Status and Result<T>.
#define ACCEL_TRY(expr)                                  \
  do {                                                   \
    auto&& accel_try_r_ = (expr);                        \
    if (!accel_try_r_.ok()) return accel_try_r_.error(); \
  } while (0)
