#include "accel/aggregator/ingest.h"

namespace accel::aggregator {
namespace {
constexpr size_t kMaxCachedJobs = 100000;
}

Ingestor::Ingestor(Store& store, Metrics& metrics, size_t max_frame_bytes)
    : store_(store), metrics_(metrics), max_frame_(max_frame_bytes) {}

Status Ingestor::load() {
  auto progress = store_.loadProgress();
  if (!progress.ok()) return progress.error();
  committed_ = std::move(*progress);
  return okStatus();
}

uint64_t Ingestor::acked(const StreamKey& key) const {
  auto it = committed_.find(key);
  return it == committed_.end() ? 0 : it->second;
}

std::optional<StreamKey> Ingestor::offer(const std::string& peer_node, std::span<const uint8_t> bytes,
                                         int64_t now_ns) {
  if (bytes.size() > max_frame_) {
    metrics_.reject(Reject::kOversized);
    return std::nullopt;
  }
  auto env = event::decode(bytes);
  if (!env.ok()) {
    metrics_.reject(Reject::kInvalid);
    return std::nullopt;
  }
  const event::Header& h = env->header;
  if (!peer_node.empty() && h.node != peer_node) {
    metrics_.reject(Reject::kNodeMismatch);
    return std::nullopt;
  }
  StreamKey key{h.node, h.epoch};
  auto staged = staged_.find(key);
  uint64_t last = staged != staged_.end() ? staged->second : acked(key);
  if (h.seq <= last) {
    ++metrics_.duplicates;
    return key;
  }
  if (h.seq != last + 1) {
    metrics_.reject(Reject::kOutOfOrder);
    return key;
  }
  staged_[key] = h.seq;
  batch_.progress[key] = h.seq;
  StoredEvent stored{0, h, env->event ? event::kindName(*env->event) : "unknown",
                     env->event ? event::jobIdOf(*env->event) : 0, now_ns,
                     std::vector<uint8_t>(bytes.begin(), bytes.end())};
  batch_.events.push_back(std::move(stored));
  if (!env->event) ++metrics_.unknown_kinds;
  batch_.lag[h.node] = double(now_ns - h.time_ns) / 1e9;
  merge(*env);
  return key;
}

Result<JobSummary*> Ingestor::job(uint32_t job_id) {
  auto it = jobs_.find(job_id);
  if (it != jobs_.end()) return &it->second;
  auto loaded = store_.loadJob(job_id);
  if (!loaded.ok()) return loaded.error();
  JobSummary s = loaded->value_or(JobSummary{});
  s.job_id = job_id;
  return &jobs_.emplace(job_id, std::move(s)).first->second;
}

// Folds the event into its job's summary; a job whose epilogs are all in is
// queued for its AdminComment, again whenever a later event changes it.
void Ingestor::merge(const event::Envelope& env) {
  if (!env.event) return;
  uint32_t id = event::jobIdOf(*env.event);
  if (id == 0) return;
  auto s = job(id);
  if (!s.ok()) return;  // unreadable stored summary: the event itself is still kept
  if (!mergeEvent(**s, env.header.node, *env.event)) return;
  bool& due = touched_[id];
  due = due || (*s)->complete();
}

Status Ingestor::commit(int64_t now_ns) {
  auto batch = seal(now_ns);
  if (!batch) return okStatus();
  Status s = store_.commit(*batch);
  finish(*batch, s);
  return s;
}

std::optional<Batch> Ingestor::seal(int64_t now_ns) {
  if (batch_.events.empty()) {
    touched_.clear();  // only duplicates or rejects: no summary changed
    return std::nullopt;
  }
  batch_.now_ns = now_ns;
  for (const auto& [id, due] : touched_) {
    batch_.jobs.push_back(jobs_.at(id));
    if (due) batch_.comment_jobs.push_back(id);
  }
  touched_.clear();
  Batch sealed = std::move(batch_);
  batch_ = Batch{};
  return sealed;
}

void Ingestor::finish(const Batch& batch, const Status& written) {
  if (!written.ok()) {
    ++metrics_.commit_failures;
    // Whatever was staged after the last good commit goes: the failed batch
    // and the open one, whose sequence numbers follow the failed ones.
    staged_.clear();
    batch_ = Batch{};
    touched_.clear();
    jobs_.clear();  // the cache may hold merges that were not stored
    return;
  }
  for (const auto& [key, seq] : batch.progress) committed_[key] = seq;
  metrics_.events_in += batch.events.size();
  ++metrics_.batches;
  for (const auto& [node, lag] : batch.lag) metrics_.setLag(node, lag);
  // Reloading is safe only when no uncommitted merge lives in the cache.
  if (jobs_.size() > kMaxCachedJobs && touched_.empty()) jobs_.clear();
  if (batch_.events.empty()) staged_.clear();  // nothing is ahead of committed_ now
}

}  // namespace accel::aggregator
