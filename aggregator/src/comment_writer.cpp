#include "accel/aggregator/comment_writer.h"

#include <algorithm>

#include "accel/aggregator/admin_comment.h"

namespace accel::aggregator {

CommentWriter::CommentWriter(Store& store, Accounting& accounting, Metrics& metrics, CommentWriterOptions options,
                             Clock clock)
    : store_(store), accounting_(accounting), metrics_(metrics), options_(options), clock_(std::move(clock)) {
  last_refill_ns_ = clock_();
}

int64_t CommentWriter::retryDelayNs(uint32_t attempts) const {
  int64_t delay = options_.retry_min.count();
  for (uint32_t i = 0; i < attempts && delay < options_.retry_max.count(); ++i) delay *= 2;
  return std::min<int64_t>(delay, options_.retry_max.count()) * 1'000'000'000;
}

Result<int> CommentWriter::runOnce() {
  int64_t now = clock_();
  auto released = store_.releaseWaits(now);  // jobs that waited long enough for their nodes
  if (!released.ok()) return released.error();
  double burst = std::max(1.0, options_.writes_per_second);
  tokens_ = std::min(burst, tokens_ + double(now - last_refill_ns_) / 1e9 * options_.writes_per_second);
  last_refill_ns_ = now;
  int budget = static_cast<int>(tokens_);
  if (budget == 0) return 0;
  auto due = store_.duePending(now, budget);
  if (!due.ok()) return due.error();
  int written = 0;
  for (const auto& p : *due) {
    tokens_ -= 1;
    Status s = writeOne(p, now);
    if (s.ok()) {
      ++written;
      ++metrics_.comment_writes;
      ACCEL_TRY(store_.finishPending(p.job_id, p.generation));
    } else {
      ++metrics_.comment_failures;
      ACCEL_TRY(store_.deferPending(p.job_id, p.generation, now + retryDelayNs(p.attempts), s.error().message()));
    }
  }
  auto pending = store_.pendingCount();
  if (pending.ok()) metrics_.comments_pending = *pending;
  return written;
}

// Reads the current comment first so that other tools' segments survive.
Status CommentWriter::writeOne(const PendingComment& p, int64_t) {
  auto summary = store_.loadJob(p.job_id);
  if (!summary.ok()) return summary.error();
  if (!*summary) return okStatus();  // nothing known about the job: nothing to write
  auto current = accounting_.adminComment(p.job_id);
  if (!current.ok()) return current.error();
  std::string merged = mergeAdminComment(*current, toCommentJson(**summary));
  if (merged == *current) return okStatus();
  return accounting_.setAdminComment(p.job_id, merged);
}

}  // namespace accel::aggregator
