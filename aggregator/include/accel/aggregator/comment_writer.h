#pragma once
// Writes finished jobs' summaries into AdminComment: the pending_comments
// table is the queue, so writes survive restarts and outages of slurmdbd
// (back-fill). Jobs whose wait for missing nodes has run out (summary_waits)
// are moved into that queue first. Written in batches (one query, one
// connection and one commit to slurmdbd, one store transaction each) and
// rate-limited by a token bucket counted in jobs; a failed write is retried
// with exponential back-off. Owns no thread: the caller calls runOnce().
#include <chrono>
#include <cstdint>
#include <vector>

#include "accel/aggregator/accounting.h"
#include "accel/aggregator/metrics.h"
#include "accel/aggregator/store.h"
#include "accel/common/clock.h"

namespace accel::aggregator {

struct CommentWriterOptions {
  double writes_per_second = 10;  // jobs attempted, successful or not
  std::chrono::seconds retry_min{2};
  std::chrono::seconds retry_max{600};
  int batch_size = 50;  // most jobs per connection to slurmdbd
};

class CommentWriter {
 public:
  // Times are `clock`'s wall time; `clock` must outlive the writer.
  CommentWriter(Store& store, Accounting& accounting, Metrics& metrics,
                CommentWriterOptions options, const Clock& clock);

  // Attempts the writes that are due, as many as the rate allows now.
  // Returns how many succeeded; an error only when the store fails.
  Result<int> runOnce();

 private:
  // Returns how many of `due` are settled as written.
  Result<int> writeBatch(const std::vector<PendingComment>& due, int64_t now);
  int64_t retryDelayNs(uint32_t attempts) const;

  Store& store_;
  Accounting& accounting_;
  Metrics& metrics_;
  CommentWriterOptions options_;
  const Clock& clock_;
  double tokens_ = 1;
  int64_t last_refill_ns_ = 0;
};

}  // namespace accel::aggregator
