#pragma once
// The aggregator's SQLite database (WAL): every accepted event, each
// (node, epoch)'s acknowledged sequence number, each job's merged summary
// and the AdminComment writes still to do. One Store per thread, except that
// the ingest thread and its BatchWriter share one (connections are opened in
// SQLite's serialized mode): the writer commits, the ingest thread only
// loads job summaries.
#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "accel/aggregator/summary.h"
#include "accel/common/result.h"
#include "accel/events/codec.h"

namespace accel::aggregator {

using StreamKey = std::pair<std::string, uint64_t>;  // node, epoch

struct StoredEvent {
  int64_t row = 0;  // filled by reads
  event::Header header;
  std::string kind;
  uint32_t job_id = 0;
  int64_t received_ns = 0;
  std::vector<uint8_t> envelope;  // the bytes as received (verified)
};

// An event accepted into a batch; its envelope is bytes[offset, offset + size)
// of the batch (one buffer for all, rather than an allocation per event).
struct BatchEvent {
  event::Header header;
  const char* kind = "";  // a static name (event::kindName)
  uint32_t job_id = 0;
  int64_t received_ns = 0;
  size_t offset = 0, size = 0;
};

// A job whose summary waits for the epilogs of some of its nodes: its
// AdminComment is queued at due_ns (CLOCK_REALTIME) unless the last epilog
// comes first.
struct SummaryWait {
  uint32_t job_id = 0;
  int64_t due_ns = 0;
};

// What the aggregator last heard from a node: any event proves it alive; a
// heartbeat also says when the next is due (accel-aggregatord nodes).
struct NodeHeard {
  int64_t last_event_ns = 0;  // when its latest event was received (aggregator's clock)
  std::optional<event::NodeHeartbeat> heartbeat;  // its latest heartbeat, if any
  int64_t heartbeat_ns = 0;                       // when that was received
};

// A node's liveness from what the aggregator last heard: "alive" while its
// latest event is at most three heartbeat intervals old, "late" after that,
// "no-heartbeat" when it never sent one (its HeartbeatInterval is 0, or it
// runs an agent that sends none): then nothing says when to expect it.
std::string nodeState(const NodeHeard& heard, int64_t now_ns);

struct NodeRow {
  std::string node;
  NodeHeard heard;
};

// A job id given to a new job (MaxJobId wrapped, or slurmctld lost its
// state): the earlier job's summary is archived, and events of the id count
// for the new job from since_ns on (received, CLOCK_REALTIME).
struct JobInstance {
  uint32_t job_id = 0;
  uint32_t instance = 0;  // the new job's JobSummary::instance (1 for the first reuse)
  int64_t since_ns = 0;
  uint32_t uid = 0;  // the new job's owner
  bool operator==(const JobInstance&) const = default;
};

struct NewJob {
  JobInstance instance;
  JobSummary archived;  // the earlier job's record, as it ended here
};

// Everything one ingest batch changes, written in one transaction.
struct Batch {
  std::vector<BatchEvent> events;
  std::vector<uint8_t> bytes;  // the envelopes as received (verified), one after another
  std::map<StreamKey, uint64_t> progress;  // new acknowledged seq per stream
  std::vector<JobSummary> jobs;            // summaries to save (those holding events: held_jobs)
  std::vector<uint32_t> released_jobs;     // jobs that held events and hold none any more
  std::vector<uint32_t> comment_jobs;      // jobs whose AdminComment is (again) due now
  std::vector<SummaryWait> waits;          // jobs whose AdminComment is due later
  std::vector<NewJob> new_jobs;            // ids given to a new job: before `jobs`
  int64_t now_ns = 0;
  std::map<std::string, double> lag;       // node -> seconds behind; for metrics only, not stored
  std::map<std::string, NodeHeard> nodes;  // what each sender's events of this batch say of it
};

struct PendingComment {
  uint32_t job_id = 0;
  uint64_t generation = 0;  // raised whenever the job is queued again
  uint32_t attempts = 0;
};

// What became of one pending comment after a write: done (its row goes, if
// the job was not queued again meanwhile), or to be tried again at next_ns.
struct SettledComment {
  uint32_t job_id = 0;
  uint64_t generation = 0;
  bool done = false;
  int64_t next_ns = 0;
  std::string error;
};

struct EventFilter {
  std::optional<uint32_t> job_id;
  std::optional<std::string> node;
  int64_t after_row = 0;
  int limit = 1000;  // rows returned, at most
  // Rows examined (stored rows after after_row, of the job's ranges when
  // job_id is set), at most; 0: no bound. Bounds one call's work whatever
  // the job or the store holds.
  int64_t max_scanned = 0;
  // When set, no further range of the job is begun once this has passed
  // (the first always is, so every call makes progress): more is set.
  std::optional<std::chrono::steady_clock::time_point> deadline{};
  // With job_id: only events received from this time on (CLOCK_REALTIME
  // ns): those of the latest job under a reused id (JobInstance::since_ns).
  int64_t since_ns = 0;
  // With job_id: only events received before this time: a job's owner does
  // not see the events held for slurmctld's word (heldSince), which may be
  // a new job's under the id.
  int64_t before_ns = std::numeric_limits<int64_t>::max();
};

// One call's rows, in row order, and where the next call goes on: more is
// set when rows may remain after next_row (the limit was reached, or the
// bound on rows examined cut the reading short, then possibly with no rows
// at all); next_row is the last row examined or returned.
struct EventPage {
  std::vector<StoredEvent> rows;
  int64_t next_row = 0;
  bool more = false;
  int64_t examined = 0;  // stored rows looked at, at most EventFilter::max_scanned when set
};

class Store {
 public:
  enum class Mode { kReadWrite, kReadOnly };
  // kFull: every commit is fsynced before it returns, so an acknowledged
  // event survives power loss. kNormal (WAL): commits are not fsynced, only
  // checkpoints; an acknowledged event survives a crash of the process but
  // the last commits may be lost on power loss or a kernel crash.
  enum class Sync { kFull, kNormal };  // order of the Synchronous choices
  // kReadWrite creates the file and schema; kReadOnly never writes.
  static Result<std::unique_ptr<Store>> open(const std::string& path, Mode mode,
                                             Sync sync = Sync::kFull);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  Result<std::map<StreamKey, uint64_t>> loadProgress();
  // The jobs whose stored summary holds events (JobSummary::held).
  Result<std::vector<uint32_t>> loadHeldJobs();
  Result<std::optional<JobSummary>> loadJob(uint32_t job_id);
  Status commit(const Batch& batch);

  Result<std::vector<PendingComment>> duePending(int64_t now_ns, int limit);
  // Removes the row if it still has `generation` (a newer queueing wins).
  Status finishPending(uint32_t job_id, uint64_t generation);
  Status deferPending(uint32_t job_id, uint64_t generation, int64_t next_ns,
                      const std::string& error);
  // finishPending / deferPending for each, in one transaction.
  Status settlePending(const std::vector<SettledComment>& settled);
  Result<int64_t> pendingCount();
  // Queues the AdminComment of every job whose wait ended by `now_ns` and
  // forgets those waits, in one transaction. Returns how many were queued.
  Result<int> releaseWaits(int64_t now_ns);
  // When the job's wait ends; nullopt when it is not waiting.
  Result<std::optional<int64_t>> waitingUntil(uint32_t job_id);

  // With a job: through its ranges (job_ranges), so the rows examined are
  // the job's own and at most store_sql::kRangeGap others' for each of them.
  Result<EventPage> readEventPage(const EventFilter& filter);
  // readEventPage without the bound on rows examined: the first filter.limit rows.
  Result<std::vector<StoredEvent>> readEvents(const EventFilter& filter);
  // Every node that ever sent an accepted event, by name.
  Result<std::vector<NodeRow>> readNodes();
  // The uid of the job's owner: the new job's when the id was reused
  // (jobInstance), otherwise from its first recorded prolog_started event;
  // nullopt when none is recorded.
  Result<std::optional<uint32_t>> jobOwner(uint32_t job_id);
  // The latest job under the id when the id was given to a new job; nullopt
  // when it never was (every event of the id is its one job's).
  Result<std::optional<JobInstance>> jobInstance(uint32_t job_id);
  // When the job's earliest held event arrived (JobSummary::held); nullopt
  // when it holds none.
  Result<std::optional<int64_t>> heldSince(uint32_t job_id);
  // The summaries of the earlier jobs under the id, oldest first.
  Result<std::vector<JobSummary>> archivedJobs(uint32_t job_id);
  // The jobs with events after `after_row`, and the newest row (after_row
  // when there is none).
  struct NewRows {
    std::vector<uint32_t> jobs;
    int64_t last_row = 0;
  };
  Result<NewRows> jobsAfter(int64_t after_row);
  // The newest event's row; 0 when there is none.
  Result<int64_t> lastRow();

 private:
  struct Prepared;
  struct Reader;
  explicit Store(sqlite3* db);
  Status finishLocked(uint32_t job_id, uint64_t generation);
  Status deferLocked(uint32_t job_id, uint64_t generation, int64_t next_ns,
                     const std::string& error);
  Status exec(const char* sql);
  Status createSchema();  // store_schema.cpp
  Status migrate();
  Result<EventPage> readAllLocked(const EventFilter& filter);  // store_events.cpp
  Result<EventPage> readSpanLocked(const EventFilter& filter);
  Result<std::optional<JobInstance>> instanceLocked(uint32_t job_id);
  // Every method may be called from any thread. The connection has no lock
  // of SQLite's own (NOMUTEX): mu_ guards it, and a commit holds it through.
  std::mutex mu_;
  sqlite3* db_;
  std::unique_ptr<Prepared> prepared_;  // read-write connections only
  // Read-write stores: loadJob's own connection, so that the ingest thread
  // does not wait for a commit in progress.
  std::unique_ptr<Reader> reader_;
};

}  // namespace accel::aggregator
