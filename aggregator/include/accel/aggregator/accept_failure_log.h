#pragma once
// The journal line for connections libzmq could not accept.
//
// When the descriptor limit is reached (EMFILE), libzmq retries the accept at
// once, so failures come by the thousand. This keeps the journal readable:
// at most one error line a minute, counting only the failures since the
// previous line, by cause, and naming the limit to raise. The links already
// open are served all along; the line says so.
#include <array>
#include <cstdint>
#include <optional>

#include "accel/aggregator/metrics.h"
#include "accel/common/clock.h"

namespace accel::aggregator {

class AcceptFailureLog {
 public:
  // `fd_limit` is the process's descriptor limit (named in the line);
  // `clock` gives the time of each check and must outlive this object.
  AcceptFailureLog(uint64_t fd_limit, const Clock& clock) : fd_limit_(fd_limit), clock_(clock) {}

  // Reads the failure counters of `m`; writes one error line (log::error)
  // when there are new failures and no line has been written in the last
  // minute. Failures seen while a line is not due are counted in the next.
  void check(const Metrics& m);

 private:
  static constexpr int64_t kIntervalNs = int64_t{60} * 1'000'000'000;
  uint64_t fd_limit_;
  const Clock& clock_;
  std::array<uint64_t, size_t(AcceptFailure::kCount)> logged_{};
  std::optional<int64_t> last_ns_;  // monotonic time of the last line; none yet
};

}  // namespace accel::aggregator
