#include "accel/aggregator/comment_writer.h"

#include <algorithm>

#include "accel/ipc/admin_comment.h"

namespace accel::aggregator {

namespace {
// How many times a write waits for slurmdbd to record the job's end; with the
// back-off (2 s doubling to 600 s) about 27 minutes in all.
constexpr uint32_t kEndWaits = 10;
}  // namespace

CommentWriter::CommentWriter(Store& store, Accounting& accounting, Metrics& metrics,
                             CommentWriterOptions options, const Clock& clock)
    : store_(store), accounting_(accounting), metrics_(metrics), options_(options), clock_(clock) {
  options_.batch_size = std::max(1, options_.batch_size);
  last_refill_ns_ = clock_.wallNs();
}

int64_t CommentWriter::retryDelayNs(uint32_t attempts) const {
  int64_t delay = options_.retry_min.count();
  for (uint32_t i = 0; i < attempts && delay < options_.retry_max.count(); ++i) delay *= 2;
  return std::min<int64_t>(delay, options_.retry_max.count()) * 1'000'000'000;
}

Result<int> CommentWriter::runOnce() {
  int64_t now = clock_.wallNs();
  auto released = store_.releaseWaits(now);  // jobs that waited long enough for their nodes
  if (!released.ok()) return released.error();
  double burst = std::max(1.0, options_.writes_per_second);
  tokens_ =
      std::min(burst, tokens_ + double(now - last_refill_ns_) / 1e9 * options_.writes_per_second);
  last_refill_ns_ = now;
  int written = 0;
  while (tokens_ >= 1) {
    int take = std::min(options_.batch_size, static_cast<int>(tokens_));
    auto due = store_.duePending(now, take);
    if (!due.ok()) return due.error();
    if (due->empty()) break;
    tokens_ -= double(due->size());
    auto n = writeBatch(*due, now);
    if (!n.ok()) return n.error();
    written += *n;
  }
  auto pending = store_.pendingCount();
  if (pending.ok()) metrics_.comments_pending = *pending;
  return written;
}

// Reads the batch's current comments first (one query) so that other tools'
// segments survive, puts off the jobs whose end slurmdbd has not recorded,
// writes those that change (Accounting spreads them over
// its connections), and settles the batch's queue rows in one transaction.
Result<int> CommentWriter::writeBatch(const std::vector<PendingComment>& due, int64_t now) {
  auto done = [](const PendingComment& p) {
    SettledComment c;
    c.job_id = p.job_id;
    c.generation = p.generation;
    c.done = true;
    return c;
  };
  std::vector<SettledComment> settled;
  std::vector<size_t> known;  // indexes into `due` of the jobs with a summary
  std::vector<std::string> summaries;
  for (size_t i = 0; i < due.size(); ++i) {
    auto summary = store_.loadJob(due[i].job_id);
    if (!summary.ok()) return summary.error();
    if (!*summary) {  // nothing known about the job: nothing to write
      settled.push_back(done(due[i]));
      continue;
    }
    known.push_back(i);
    summaries.push_back(toCommentJson(**summary));
  }
  auto fail = [&](const PendingComment& p, const Error& e) {
    ++metrics_.comment_failures;
    settled.push_back({.job_id = p.job_id,
                       .generation = p.generation,
                       .done = false,
                       .next_ns = now + retryDelayNs(p.attempts),
                       .error = e.message()});
  };
  int written = 0;
  auto succeed = [&](const PendingComment& p) {
    ++written;
    ++metrics_.comment_writes;
    settled.push_back(done(p));
  };
  std::vector<uint32_t> ids;
  ids.reserve(known.size());
  for (size_t i : known) ids.push_back(due[i].job_id);
  auto current = ids.empty()
                     ? Result<std::map<uint32_t, AccountedJob>>(std::map<uint32_t, AccountedJob>{})
                     : accounting_.adminComments(ids);
  std::vector<CommentUpdate> updates;
  std::vector<size_t> updated;  // indexes into `due`, one per update
  for (size_t k = 0; k < known.size(); ++k) {
    const PendingComment& p = due[known[k]];
    if (!current.ok()) {
      fail(p, current.error());
      continue;
    }
    auto it = current->find(p.job_id);
    if (it == current->end()) {
      fail(p, Error(ErrorCode::kNotFound,
                    "slurmdbd has no record of job " + std::to_string(p.job_id)));
      continue;
    }
    if (it->second.running && p.attempts < kEndWaits) {
      // slurmctld's completion record, which carries its own copy of the
      // AdminComment, has not reached slurmdbd yet: a write now could be
      // overwritten by it. Not a failure; tried again after the back-off.
      // After kEndWaits tries the summary is written anyway: an end that
      // never comes (a runaway job of a lost slurmctld state) must not hold
      // it for ever.
      ++metrics_.comment_waits;
      settled.push_back({.job_id = p.job_id,
                         .generation = p.generation,
                         .done = false,
                         .next_ns = now + retryDelayNs(p.attempts),
                         .error = "slurmdbd has not recorded the job's end"});
      continue;
    }
    const std::string& existing = it->second.admin_comment;
    std::string merged = ipc::mergeAdminComment(existing, summaries[k]);
    if (merged == existing) {
      succeed(p);
      continue;
    }
    updates.push_back({p.job_id, std::move(merged)});
    updated.push_back(known[k]);
  }
  auto results = accounting_.setAdminComments(updates);
  for (size_t u = 0; u < updated.size(); ++u) {
    const Status& s = u < results.size()
                          ? results[u]
                          : Status(Error(ErrorCode::kInternal, "no result for the write"));
    if (s.ok())
      succeed(due[updated[u]]);
    else
      fail(due[updated[u]], s.error());
  }
  ACCEL_TRY(store_.settlePending(settled));
  return written;
}

}  // namespace accel::aggregator
