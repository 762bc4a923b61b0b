#include "accel/aggregator/accept_failure_log.h"

#include <string>

#include "accel/common/log.h"

namespace accel::aggregator {

void AcceptFailureLog::check(const Metrics& m) {
  const int64_t now = clock_.monoNs();
  if (last_ns_ && now - *last_ns_ < kIntervalNs) return;
  std::array<uint64_t, size_t(AcceptFailure::kCount)> seen{};
  uint64_t more = 0;
  for (size_t i = 0; i < seen.size(); ++i)
    seen[i] = m.accept_failures[i].load(), more += seen[i] - logged_[i];
  if (more == 0) return;
  std::string why;
  auto add = [&](AcceptFailure f, const std::string& what) {
    uint64_t n = seen[size_t(f)] - logged_[size_t(f)];
    if (n > 0) why += (why.empty() ? "" : "; ") + std::to_string(n) + " " + what;
  };
  add(AcceptFailure::kEmfile, "for want of descriptors (EMFILE: this process's limit of " +
                                  std::to_string(fd_limit_) + " is reached; raise LimitNOFILE)");
  add(AcceptFailure::kEnfile, "for want of descriptors system-wide (ENFILE: fs.file-max)");
  add(AcceptFailure::kOther, "for other reasons");
  log::error("network: connections not accepted: " + why +
             "; the links already open are still served");
  logged_ = seen;
  last_ns_ = now;
}

}  // namespace accel::aggregator
