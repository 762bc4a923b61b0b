#include "accel/aggregator/ingest.h"

#include <utility>
#include <vector>

namespace accel::aggregator {
namespace {
constexpr size_t kMaxCachedJobs = 100000;
// The node names the cached summaries hold, at most (about 100 MB): a key
// holder's jobs of 65,536 nodes each would otherwise fill memory long before
// kMaxCachedJobs. Counted as summaries are stored, so a job stored twice
// counts twice and the cache is only dropped sooner.
constexpr size_t kMaxCachedListedNames = size_t{2} * 1024 * 1024;

Offer ackOnly(const StreamKey& key) {
  Offer o;
  o.ack = key;
  return o;
}

Offer refused(std::optional<StreamKey> key, event::Nack nack) {
  Offer o;
  o.ack = std::move(key);
  o.nack = std::move(nack);
  return o;
}
}  // namespace

Ingestor::Ingestor(Store& store, Metrics& metrics, size_t max_frame_bytes,
                   std::chrono::seconds summary_wait, RunChecks* runs)
    : store_(store),
      metrics_(metrics),
      max_frame_(max_frame_bytes),
      summary_wait_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(summary_wait).count()),
      runs_(runs) {}

Status Ingestor::load() {
  auto progress = store_.loadProgress();
  if (!progress.ok()) return progress.error();
  streams_.clear();
  for (const auto& [key, seq] : *progress) streams_[key] = Stream{seq, seq, 0, false};
  auto held = store_.loadHeldJobs();
  if (!held.ok()) return held.error();
  for (uint32_t id : *held) held_jobs_.try_emplace(id, 0);
  metrics_.held_jobs = int64_t(held_jobs_.size());
  // Liveness survives a restart: the metric knows every node from the start.
  auto nodes = store_.readNodes();
  if (!nodes.ok()) return nodes.error();
  for (const auto& row : *nodes) metrics_.noteNode(row.node, row.heard);
  return okStatus();
}

uint64_t Ingestor::acked(const StreamKey& key) const {
  auto it = streams_.find(key);
  return it == streams_.end() ? 0 : it->second.committed;
}

Offer Ingestor::offer(std::string_view peer_node, std::span<const uint8_t> bytes, int64_t now_ns) {
  if (bytes.size() > max_frame_)
    return refuse(peer_node, bytes, Reject::kOversized, event::NackReason::kOversized,
                  "frame of " + std::to_string(bytes.size()) + " bytes, over MaxFrameSize " +
                      std::to_string(max_frame_));
  auto env = event::decode(bytes);
  if (!env.ok())
    return refuse(peer_node, bytes, Reject::kInvalid, event::NackReason::kInvalid,
                  env.error().message());
  const event::Header& h = env->header;
  if (!peer_node.empty() && h.node != peer_node)
    return refuse(peer_node, bytes, Reject::kNodeMismatch, event::NackReason::kNodeMismatch, "");
  StreamKey key{h.node, h.epoch};
  auto stream = streams_.find(key);
  uint64_t last = stream == streams_.end() ? 0 : stream->second.staged;
  if (h.seq <= last) {
    ++metrics_.duplicates;
    return ackOnly(key);
  }
  if (h.seq != last + 1) {
    metrics_.reject(Reject::kOutOfOrder);
    return ackOnly(key);
  }
  if (env->event && !affordNodeList(h.node, *env->event)) {
    metrics_.reject(Reject::kDeferred);
    return ackOnly(key);  // not staged: a gap its node fills again later
  }
  if (stream == streams_.end())
    stream = streams_.try_emplace(key).first;  // only streams that begin
  uint32_t job_id = env->event ? event::jobIdOf(*env->event) : 0;
  Verdict verdict = admissionOf(*env, job_id, now_ns);
  if (verdict.admission == Admission::kRefuse) {
    metrics_.reject(Reject::kNotOnJob);
    Offer o = skip(stream, key, h.seq, event::NackReason::kNotOnJob, std::move(verdict.why));
    o.job_id = job_id;
    return o;
  }
  stage(stream, h.seq);
  stream->second.lag_s = double(now_ns - h.time_ns) / 1e9;
  batch_.events.push_back({h, env->event ? event::kindName(*env->event) : "unknown", job_id, now_ns,
                           batch_.bytes.size(), bytes.size()});
  batch_.bytes.insert(batch_.bytes.end(), bytes.begin(), bytes.end());
  if (!env->event) ++metrics_.unknown_kinds;
  if (verdict.admission == Admission::kHold)
    holdEvent(h, job_id, bytes, now_ns);
  else
    merge(*env, job_id, now_ns);
  NodeHeard& heard = batch_.nodes[h.node];
  heard.last_event_ns = now_ns;
  if (const auto* hb = env->event ? std::get_if<event::NodeHeartbeat>(&*env->event) : nullptr) {
    heard.heartbeat = *hb;
    heard.heartbeat_ns = now_ns;
  }
  return ackOnly(key);
}

// A frame that was refused before its event was read. Its header, when it
// can be read and names the sender, says which stream it belongs to: as that
// stream's next number it is skipped, as an older one it is a duplicate, as a
// later one a gap (it will come again, in order).
Offer Ingestor::refuse(std::string_view peer_node, std::span<const uint8_t> bytes, Reject why,
                       event::NackReason reason, std::string message) {
  metrics_.reject(why);
  auto h = event::peekHeader(bytes);
  if (!h.ok()) {
    return refused(std::nullopt, event::Nack{0, 0, event::NackReason::kUnreadable, false,
                                             message.empty() ? h.error().message() : message});
  }
  if (!peer_node.empty() && h->node != peer_node) {
    if (why != Reject::kNodeMismatch) metrics_.reject(Reject::kNodeMismatch);
    return refused(std::nullopt,
                   event::Nack{h->epoch, h->seq, event::NackReason::kNodeMismatch, false,
                               "the frame names node '" + h->node + "', its key is " +
                                   std::string(peer_node) + "'s"});
  }
  StreamKey key{h->node, h->epoch};
  auto stream = streams_.find(key);
  uint64_t last = stream == streams_.end() ? 0 : stream->second.staged;
  if (h->seq <= last) {
    ++metrics_.duplicates;
    return ackOnly(key);
  }
  if (h->seq != last + 1) {
    metrics_.reject(Reject::kOutOfOrder);
    return ackOnly(key);
  }
  if (stream == streams_.end()) stream = streams_.try_emplace(key).first;
  return skip(stream, key, h->seq, reason, std::move(message));
}

// Counts `seq` as received without storing anything for it.
Offer Ingestor::skip(Streams::iterator stream, const StreamKey& key, uint64_t seq,
                     event::NackReason reason, std::string message) {
  stage(stream, seq);
  return refused(key, event::Nack{key.second, seq, reason, true, std::move(message)});
}

void Ingestor::stage(Streams::iterator stream, uint64_t seq) {
  Stream& st = stream->second;
  st.staged = seq;
  if (!st.in_batch) st.in_batch = true, batch_streams_.push_back(stream);
}

// Whether the event's node may report its job (job_admission.h). A job
// whose stored summary cannot be read is not checked: the event is kept.
Verdict Ingestor::admissionOf(const event::Envelope& env, uint32_t job_id, int64_t now_ns) {
  if (!env.event || job_id == 0) return {};
  auto s = job(job_id);
  if (!s.ok()) return {};
  return admit(**s, env.header.node, *env.event, now_ns);
}

// Keeps the event in its job's summary until slurmctld confirms its run,
// and asks. One that the summary has no room for is stored and never counts.
void Ingestor::holdEvent(const event::Header& header, uint32_t id, std::span<const uint8_t> bytes,
                         int64_t now_ns) {
  auto s = job(id);
  if (!s.ok()) return;
  if (!hold(**s, header.node, now_ns, bytes)) {
    noteUnconfirmed(id, header.node,
                    "job " + std::to_string(id) + ": more events held than " +
                        std::to_string(JobSummary::kMaxHeld) + " (or " +
                        std::to_string(JobSummary::kMaxHeldBytes) + " bytes) while slurmctld " +
                        "has not confirmed the run");
    return;
  }
  held_touched_.insert(id);
  std::erase(batch_.released_jobs, id);
  held_jobs_[id] = now_ns;
  metrics_.held_jobs = int64_t(held_jobs_.size());
  if (runs_) runs_->ask(id, now_ns);
}

bool Ingestor::settle(int64_t now_ns) {
  if (!runs_) return false;
  const size_t before = touched_.size() + held_touched_.size();
  for (const RunAnswer& answer : runs_->take()) settleJob(answer);
  if (now_ns - last_asks_ns_ >= 1'000'000'000) {
    last_asks_ns_ = now_ns;
    for (const auto& [id, newest_ns] : held_jobs_) runs_->ask(id, newest_ns);
  }
  metrics_.held_jobs = int64_t(held_jobs_.size());
  return touched_.size() + held_touched_.size() != before;
}

void Ingestor::settleJob(const RunAnswer& answer) {
  auto held = held_jobs_.find(answer.job_id);
  if (held == held_jobs_.end()) return;
  auto s = job(answer.job_id);
  if (!s.ok()) return;
  Settled out = settleHeld(**s, answer);
  if (out.archived) {
    ++metrics_.reused_job_ids;
    batch_.new_jobs.push_back(
        {{answer.job_id, (*s)->instance, out.new_since_ns, out.new_owner}, *out.archived});
  }
  for (auto& d : out.dropped) noteUnconfirmed(answer.job_id, std::move(d.node), std::move(d.why));
  if (out.merged) touched_.insert(answer.job_id);
  if (out.merged || !out.dropped.empty()) held_touched_.insert(answer.job_id);
  if (!(*s)->held.empty()) {
    held->second = out.newest_held_ns;
    return;
  }
  held_jobs_.erase(held);
  batch_.released_jobs.push_back(answer.job_id);
}

void Ingestor::noteUnconfirmed(uint32_t job_id, std::string node, std::string why) {
  ++metrics_.runs_unconfirmed;
  if (unconfirmed_.size() < kKeptUnconfirmed)
    unconfirmed_.push_back({job_id, std::move(node), std::move(why)});
  else
    ++unconfirmed_dropped_;
}

std::vector<Unconfirmed> Ingestor::takeUnconfirmed(uint64_t* more) {
  if (more) *more = unconfirmed_dropped_;
  unconfirmed_dropped_ = 0;
  return std::exchange(unconfirmed_, {});
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

// Folds the event into its job's summary; whether its AdminComment is due is
// decided when the batch is sealed, from the summary as the batch leaves it.
void Ingestor::merge(const event::Envelope& env, uint32_t id, int64_t now_ns) {
  if (!env.event || id == 0) return;
  auto s = job(id);
  if (!s.ok()) return;  // unreadable stored summary: the event itself is still kept
  if (mergeEvent(**s, env.header.node, *env.event, now_ns)) touched_.insert(id);
}

Status Ingestor::commit(int64_t now_ns) {
  auto batch = seal(now_ns);
  if (!batch) return okStatus();
  Status s = store_.commit(*batch);
  finish(*batch, s);
  return s;
}

// Whether the batch can still pay for the node list of `ev` (a prolog's),
// counted against the batch's and `node`'s budget when it can. A list read
// before costs nothing (node_lists.h).
bool Ingestor::affordNodeList(const std::string& node, const event::Event& ev) {
  const auto* prolog = std::get_if<event::PrologStarted>(&ev);
  if (!prolog) return true;
  const size_t cost = nodeListCost(prolog->node_list, prolog->node_count);
  if (cost == 0) return true;
  size_t& mine = list_names_by_node_[node];
  // A batch's first list is always read, so that no list waits forever.
  if (list_names_ > 0 &&
      (list_names_ + cost > kMaxListNamesPerBatch || mine + cost > kMaxListNamesPerNode))
    return false;
  list_names_ += cost;
  mine += cost;
  return true;
}

std::optional<Batch> Ingestor::seal(int64_t now_ns) {
  list_names_ = 0;
  list_names_by_node_.clear();
  if (batch_streams_.empty() && touched_.empty() && held_touched_.empty() &&
      batch_.released_jobs.empty() && batch_.new_jobs.empty())
    return std::nullopt;  // only duplicates or gaps: no summary changed
  batch_.now_ns = now_ns;
  for (auto stream : batch_streams_) {
    batch_.progress[stream->first] = stream->second.staged;
    batch_.lag[stream->first.first] = stream->second.lag_s;
    stream->second.in_batch = false;
  }
  batch_streams_.clear();
  for (uint32_t id : touched_) {
    const JobSummary& job = jobs_.at(id);
    batch_.jobs.push_back(job);
    auto due = commentDueNs(job, summary_wait_ns_);
    if (!due) continue;
    if (*due <= now_ns)
      batch_.comment_jobs.push_back(id);
    else
      batch_.waits.push_back({id, *due});
  }
  for (uint32_t id : held_touched_)
    if (!touched_.contains(id))
      batch_.jobs.push_back(jobs_.at(id));  // its comment is not due again
  touched_.clear();
  held_touched_.clear();
  Batch sealed = std::move(batch_);
  batch_ = Batch{};
  // The next batch is likely as large: no regrowing (and copying) on the way.
  batch_.events.reserve(sealed.events.size());
  batch_.bytes.reserve(sealed.bytes.size());
  return sealed;
}

void Ingestor::finish(const Batch& batch, const Status& written) {
  if (!written.ok()) {
    ++metrics_.commit_failures;
    // Whatever was staged after the last good commit goes: the failed batch
    // and the open one, whose sequence numbers follow the failed ones.
    for (auto& [key, st] : streams_) st = Stream{st.committed, st.committed, 0, false};
    batch_streams_.clear();
    batch_ = Batch{};
    touched_.clear();
    held_touched_.clear();
    jobs_.clear();  // the cache may hold merges that were not stored
    listed_in_cache_ = 0;
    // Jobs released by the lost batches still hold their events in the
    // store: ask about them again.
    if (auto stored = store_.loadHeldJobs(); stored.ok())
      for (uint32_t id : *stored) held_jobs_.try_emplace(id, 0);
    last_asks_ns_ = 0;
    return;
  }
  for (const auto& [key, seq] : batch.progress) streams_[key].committed = seq;
  metrics_.events_in += batch.events.size();
  ++metrics_.batches;
  for (const auto& [node, lag] : batch.lag) metrics_.setLag(node, lag);
  for (const auto& [node, heard] : batch.nodes) metrics_.noteNode(node, heard);
  for (const auto& job : batch.jobs) listed_in_cache_ += job.listed_nodes.size();
  // Reloading is safe only when no uncommitted merge lives in the cache.
  if ((jobs_.size() > kMaxCachedJobs || listed_in_cache_ > kMaxCachedListedNames) &&
      touched_.empty() && held_touched_.empty()) {
    jobs_.clear();
    listed_in_cache_ = 0;
  }
}

}  // namespace accel::aggregator
