#pragma once
// Questions from the nodes about recorded job events (schemas/query.fbs),
// received on a ROUTER socket of their own (QueryAddress) by a thread of its
// own and answered by `workers` threads, each with its own read-only
// connection to the database, so that questions never hold up ingest.
//
// Each person's asks (the uid a node vouches for; an administrator's, per
// node) wait in a queue of their own, and the workers take the queues in
// turn: one person's loop of questions delays another's by at most one
// answer per worker. A person holds at most max_queued_per_user asks waiting
// or in progress; more are answered Busy at once. Each answer examines at
// most max_scanned_rows stored rows (Store::readEventPage) and returns at
// most max_answer_events: a long job is read page by page, each answer
// saying where the next one goes on (last_row, more). CURVE as on Listen: the server's keys and the
// ZAP handler of its context, so only nodes on the allow list may ask. A node vouches for the
// person it asks for (its kernel's peer credentials); the owner of a job is the uid in its
// prolog_started events.
//
// An ask with `wait` is held until its job has an event after the ask's row:
// the server calls committed() after each commit, and the thread then reads
// which jobs have new rows and answers the asks held for them. A held ask is
// answered empty after hold_timeout, so that one from a node that went away
// does not stay held; a node still there asks again at once.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "accel/common/result.h"
#include "accel/events/curve_keys.h"

namespace zmq {
class context_t;
}

namespace accel::aggregator {

struct QueryOptions {
  std::string listen;              // zmq endpoint, e.g. "tcp://*:7451"
  std::string database;            // opened read-only
  size_t max_held = 4096;          // asks held at once, over all nodes
  size_t max_held_per_node = 256;  // ... from one node
  std::chrono::milliseconds hold_timeout{20000};
  size_t max_answer_bytes = size_t{48} * 1024;  // of lines; an answer fits one control datagram
  int max_answer_events = 256;
  int64_t max_scanned_rows = 20000;               // rows one answer may examine
  std::chrono::milliseconds max_answer_time{50};  // no further range of the job begun after it
  size_t workers = 2;                             // threads answering
  size_t max_queued_per_user = 8;                 // asks of one person waiting or being answered
  size_t max_queued = 1024;                       // asks waiting, over everyone
  // Whether the key a connection authenticated with (Z85) is still the
  // node's on the allow list in force; asks over a connection whose key was
  // taken off it since are not answered. Unset: every authenticated ask is.
  std::function<bool(const char* key, const char* node)> still_allowed{};
};

class EventQueries {
 public:
  // Binds `options.listen` in `ctx` (whose ZAP handler must be running) and
  // starts the thread. Errors: the database cannot be opened, the bind failed.
  static Result<std::unique_ptr<EventQueries>> start(zmq::context_t& ctx,
                                                     const QueryOptions& options,
                                                     const event::CurveKeyPair& keys);
  ~EventQueries();  // stops and joins the thread
  EventQueries(const EventQueries&) = delete;
  EventQueries& operator=(const EventQueries&) = delete;

  // Events were committed: held asks are looked at again. Any thread.
  void committed();
  // While paused the workers take no ask (they finish the one in hand);
  // asks still queue. For tests and benchmarks. Any thread.
  void pause(bool paused);
  // Asks queued and not yet taken by a worker.
  size_t waiting();

  struct Impl;

 private:
  explicit EventQueries(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accel::aggregator
