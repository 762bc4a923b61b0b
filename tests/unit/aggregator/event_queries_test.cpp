// Questions about recorded events (event_queries.h) over a real ROUTER with
// CURVE, asked the way accel-agentd asks them: who may see a job, a held ask
// answered by the commit that brings its job's next event (and not by
// another job's), the hold's end, answers in batches, what is refused, and
// the turns that each person's asks take.
#include "accel/aggregator/event_queries.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "accel/schemas/query_generated.h"
#include "server_fixture.h"

namespace accel::aggregator {
namespace {

using namespace std::chrono_literals;
namespace q = accel::query;

struct Answer {
  uint64_t id = 0;
  q::Outcome outcome = q::Outcome::Ok;
  std::string message;
  std::vector<std::string> lines;
  int64_t last_row = 0;
  bool more = false;
};

struct AskArgs {
  uint32_t job_id = 0;
  uint32_t uid = 1000;
  bool admin = false;
  int64_t after_row = 0;
  bool wait = false;
  std::string node{};
};

class EventQueriesTest : public test::QueryServerFixture {
 protected:
  void start(std::chrono::milliseconds hold = 20s) { startWithQueries(hold); }
  void prolog(uint32_t job, uint32_t uid) {
    record(event::PrologStarted{job, uid, "u" + std::to_string(uid), "n1", 1, 0});
  }
  void task(uint32_t job, uint32_t pid) { record(event::TaskStarted{job, 0, pid, 1}); }

  uint64_t ask(const AskArgs& a, zmq::socket_t* via = nullptr) {
    flatbuffers::FlatBufferBuilder fbb;
    const uint64_t id = ++ask_id_;
    auto body = q::CreateEventsAskDirect(fbb, id, a.job_id, a.uid, a.admin, a.after_row,
                                         a.node.empty() ? nullptr : a.node.c_str(), false, a.wait);
    fbb.Finish(q::CreateMessage(fbb, q::Body::EventsAsk, body.Union()), q::MessageIdentifier());
    (via ? via : asker_.get())->send(zmq::buffer(fbb.GetBufferPointer(), fbb.GetSize()));
    return id;
  }
  // The next answer within `limit`, polling the server meanwhile (its
  // commits are what releases held asks).
  std::optional<Answer> answer(std::chrono::milliseconds limit = 2s, zmq::socket_t* via = nullptr) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    zmq::socket_t& s = via ? *via : *asker_;
    while (std::chrono::steady_clock::now() < deadline) {
      zmq::message_t m;
      if (s.recv(m, zmq::recv_flags::dontwait)) {
        const auto* raw = static_cast<const uint8_t*>(m.data());
        const std::vector<uint8_t> bytes(raw, raw + m.size());  // aligned, as FlatBuffers wants
        const uint8_t* data = bytes.data();
        flatbuffers::Verifier v(data, bytes.size());
        EXPECT_TRUE(q::VerifyMessageBuffer(v));
        const auto* a = q::GetMessage(data)->body_as_EventsAnswer();
        if (!a) return std::nullopt;
        Answer out{a->id(), a->outcome(),  a->message() ? a->message()->str() : "",
                   {},      a->last_row(), a->more()};
        if (a->lines())
          for (const auto* l : *a->lines()) out.lines.push_back(l->str());
        return out;
      }
      EXPECT_TRUE(server_->poll(5ms).ok());
    }
    return std::nullopt;
  }

  uint64_t ask_id_ = 0;
};

TEST_F(EventQueriesTest, TheOwnerAndAdminsSeeAJobOthersDoNot) {
  start();
  prolog(7, 1000);
  task(7, 11);
  prolog(8, 2000);

  const uint64_t id = ask({.job_id = 7, .uid = 1000});
  auto mine = answer();
  ASSERT_TRUE(mine);
  EXPECT_EQ(mine->id, id);
  EXPECT_EQ(mine->outcome, q::Outcome::Ok);
  ASSERT_EQ(mine->lines.size(), 2u);
  EXPECT_NE(mine->lines[0].find(" prolog_started job=7 "), std::string::npos) << mine->lines[0];
  EXPECT_NE(mine->lines[1].find(" task_started job=7 "), std::string::npos) << mine->lines[1];
  EXPECT_FALSE(mine->more);

  ask({.job_id = 7, .uid = 2000});
  auto other = answer();
  ASSERT_TRUE(other);
  EXPECT_EQ(other->outcome, q::Outcome::NotFound);
  EXPECT_EQ(other->message, "no events of job 7 of yours are recorded");
  EXPECT_TRUE(other->lines.empty());

  ask({.job_id = 7, .uid = 2000, .admin = true});
  auto admin = answer();
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->lines, mine->lines);

  // A job with no events is refused to a user the same way as another's.
  ask({.job_id = 99, .uid = 1000});
  auto none = answer();
  ASSERT_TRUE(none);
  EXPECT_EQ(none->outcome, q::Outcome::NotFound);
  EXPECT_EQ(none->message, "no events of job 99 of yours are recorded");

  // Only the events after the row asked for, and from the node asked for.
  ask({.job_id = 7, .uid = 1000, .after_row = mine->last_row});
  auto after = answer();
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->lines.empty());
  EXPECT_EQ(after->last_row, mine->last_row);
  ask({.job_id = 7, .uid = 1000, .node = "n2"});
  auto elsewhere = answer();
  ASSERT_TRUE(elsewhere);
  EXPECT_TRUE(elsewhere->lines.empty());
}

// Job 7 was uid 1000's; its id is then given to uid 2000's job (slurmctld's
// state was lost). 1000, following the id, is never shown the new job's
// events: not while they wait for slurmctld's word, nor after it came.
TEST_F(EventQueriesTest, AReusedIdsEventsAreTheNewOwnersOnly) {
  start(300ms);
  prolog(7, 1000);
  record(event::EpilogFinished{7});
  ask({.job_id = 7, .uid = 1000});
  auto first = answer();
  ASSERT_TRUE(first);
  ASSERT_EQ(first->lines.size(), 2u);
  ask({.job_id = 7, .uid = 1000, .after_row = first->last_row, .wait = true});
  prolog(7, 2000);  // held: it may be a new job's, or a replay
  task(7, 5);
  auto following = answer(2s);
  ASSERT_TRUE(following);
  EXPECT_TRUE(following->lines.empty()) << following->lines.front();
  ASSERT_FALSE(runs_.asks.empty());

  const int64_t later_s = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count() +
                          1;
  runs_.answer(7, 0, {"n1"}, later_s * 1'000'000'000, later_s);
  for (int i = 0; i < 400 && metrics_.reused_job_ids == 0; ++i)
    ASSERT_TRUE(server_->poll(5ms).ok());
  ASSERT_EQ(metrics_.reused_job_ids, 1u);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(server_->poll(5ms).ok());  // its commit

  ask({.job_id = 7, .uid = 1000});
  auto old_owner = answer();
  ASSERT_TRUE(old_owner);
  EXPECT_EQ(old_owner->outcome, q::Outcome::NotFound);
  EXPECT_TRUE(old_owner->lines.empty());
  ask({.job_id = 7, .uid = 2000});
  auto new_owner = answer();
  ASSERT_TRUE(new_owner);
  EXPECT_EQ(new_owner->outcome, q::Outcome::Ok);
  ASSERT_EQ(new_owner->lines.size(), 2u);
  EXPECT_NE(new_owner->lines[0].find("\"uid\":2000"), std::string::npos) << new_owner->lines[0];
  EXPECT_NE(new_owner->lines[1].find(" task_started job=7 "), std::string::npos);
}

TEST_F(EventQueriesTest, AHeldAskIsAnsweredByTheCommitOfItsJobsNextEvent) {
  start();
  prolog(7, 1000);
  ask({.job_id = 7, .uid = 1000});
  auto first = answer();
  ASSERT_TRUE(first);
  ASSERT_EQ(first->lines.size(), 1u);

  const uint64_t id = ask({.job_id = 7, .uid = 1000, .after_row = first->last_row, .wait = true});
  EXPECT_FALSE(answer(300ms)) << "a held ask was answered with nothing new";
  task(8, 1);  // another job's event does not release it
  EXPECT_FALSE(answer(300ms));
  task(7, 42);
  auto next = answer();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->id, id);
  ASSERT_EQ(next->lines.size(), 1u);
  EXPECT_NE(next->lines[0].find(" task_started job=7 "), std::string::npos) << next->lines[0];
  EXPECT_GT(next->last_row, first->last_row);
}

// A user may follow a job before its first event: the owner is checked when
// the events come, and another user's hold then ends refused.
TEST_F(EventQueriesTest, AHoldBeforeTheJobsFirstEventIsCheckedWhenTheEventsCome) {
  start();
  ask({.job_id = 5, .uid = 1000, .wait = true});
  auto other = dealer("ipc://" + dir_ + "/query.sock", node_keys_);
  ask({.job_id = 5, .uid = 3000, .wait = true}, other.get());
  EXPECT_FALSE(answer(300ms));
  prolog(5, 1000);
  auto mine = answer();
  ASSERT_TRUE(mine);
  EXPECT_EQ(mine->outcome, q::Outcome::Ok);
  EXPECT_EQ(mine->lines.size(), 1u);
  auto refused = answer(2s, other.get());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->outcome, q::Outcome::NotFound);
  EXPECT_TRUE(refused->lines.empty());
}

TEST_F(EventQueriesTest, AHoldEndsEmptyAfterItsTime) {
  start(200ms);
  prolog(7, 1000);
  ask({.job_id = 7, .uid = 1000});
  auto first = answer();
  ASSERT_TRUE(first);
  const auto asked = std::chrono::steady_clock::now();
  ask({.job_id = 7, .uid = 1000, .after_row = first->last_row, .wait = true});
  auto empty = answer(3s);
  ASSERT_TRUE(empty);
  EXPECT_GE(std::chrono::steady_clock::now() - asked, 200ms);
  EXPECT_EQ(empty->outcome, q::Outcome::Ok);
  EXPECT_TRUE(empty->lines.empty());
  EXPECT_EQ(empty->last_row, first->last_row);
  EXPECT_FALSE(empty->more);
}

TEST_F(EventQueriesTest, ALongJobIsAnsweredInBatches) {
  start();
  prolog(7, 1000);
  for (uint32_t pid = 1; pid <= 300; ++pid) task(7, pid);
  std::vector<std::string> all;
  int64_t after = 0;
  int answers = 0;
  for (bool more = true; more; ++answers) {
    ask({.job_id = 7, .uid = 1000, .after_row = after});
    auto a = answer();
    ASSERT_TRUE(a);
    all.insert(all.end(), a->lines.begin(), a->lines.end());
    after = a->last_row;
    more = a->more;
  }
  EXPECT_EQ(all.size(), 301u);
  EXPECT_EQ(answers, 2);
  EXPECT_NE(all.back().find(" task_started job=7 "), std::string::npos);
}

TEST_F(EventQueriesTest, WhatIsNotAnAskIsRefusedAndAnUnknownKeyIsNotHeard) {
  start();
  prolog(7, 1000);
  asker_->send(zmq::str_buffer("not a question"));
  auto garbage = answer();
  ASSERT_TRUE(garbage);
  EXPECT_EQ(garbage->outcome, q::Outcome::BadRequest);

  auto stranger = dealer("ipc://" + dir_ + "/query.sock", *event::generateCurveKeyPair());
  ask({.job_id = 7, .uid = 0, .admin = true}, stranger.get());
  EXPECT_FALSE(answer(500ms, stranger.get())) << "a key not on the allow list was answered";
}

// A node whose key is taken off the allow list is not answered on the
// connection it already has.
TEST_F(EventQueriesTest, ARevokedKeyIsNotAnsweredOnItsOpenConnection) {
  start();
  prolog(7, 1000);
  ask({.job_id = 7, .uid = 1000});
  ASSERT_TRUE(answer());
  std::ofstream(dir_ + "/nodes/n1.pub", std::ios::trunc)
      << event::generateCurveKeyPair()->public_key << "\n";
  ASSERT_TRUE(server_->reloadAllowList().ok());
  ask({.job_id = 7, .uid = 1000});
  EXPECT_FALSE(answer(500ms)) << "a revoked key was answered";
}

// Asks of an EventQueries of the test's own, in a context without a ZAP
// handler (every CURVE client is heard), whose workers start paused: the
// asks all queue before any is answered, so the order of the answers is
// the order in which the workers took them.
class FairTurnsTest : public EventQueriesTest {
 protected:
  void TearDown() override {
    via_.reset();
    queries_.reset();
    EventQueriesTest::TearDown();
  }
  void startOwn(size_t per_user) {
    start();
    prolog(7, 1000);
    task(7, 1);
    prolog(8, 2000);
    const std::string ep = "ipc://" + dir_ + "/own.sock";
    QueryOptions o{.listen = ep,
                   .database = dir_ + "/events.db",
                   .workers = 1,
                   .max_queued_per_user = per_user};
    auto q = EventQueries::start(own_, o, server_keys_);
    ASSERT_TRUE(q.ok()) << q.error().message();
    queries_ = std::move(*q);
    queries_->pause(true);
    via_ = dealer(ep, node_keys_);
  }
  bool waitQueued(size_t n) {
    for (int i = 0; i < 5000 && queries_->waiting() < n; ++i) std::this_thread::sleep_for(1ms);
    return queries_->waiting() == n;
  }

  zmq::context_t own_;
  std::unique_ptr<EventQueries> queries_;
  std::unique_ptr<zmq::socket_t> via_;
};

// Thirty asks of uid 1000, then one of uid 2000, all through one node (one
// pipe, taken in order): the second person's ask is answered second, not
// after the first person's backlog.
TEST_F(FairTurnsTest, OnePersonsBacklogDoesNotHoldUpAnother) {
  startOwn(64);
  for (int i = 0; i < 30; ++i) ask({.job_id = 7, .uid = 1000}, via_.get());
  const uint64_t theirs = ask({.job_id = 8, .uid = 2000}, via_.get());
  ASSERT_TRUE(waitQueued(31)) << queries_->waiting() << " asks queued";
  queries_->pause(false);
  std::vector<uint64_t> order;
  for (int i = 0; i < 31; ++i) {
    auto a = answer(5s, via_.get());
    ASSERT_TRUE(a) << "answer " << i;
    EXPECT_EQ(a->outcome, q::Outcome::Ok) << a->message;
    order.push_back(a->id);
  }
  const auto at = std::find(order.begin(), order.end(), theirs) - order.begin();
  EXPECT_LE(at, 1) << "uid 2000's ask was answered after " << at << " of uid 1000's";
  EXPECT_EQ(order.front(), theirs - 30);  // each person's asks in their order
}

// A person with max_queued_per_user asks in progress is told to wait at
// once; somebody else's ask is still taken.
TEST_F(FairTurnsTest, APersonsAsksBeyondTheirShareAreRefusedBusy) {
  startOwn(4);
  for (int i = 0; i < 6; ++i) ask({.job_id = 7, .uid = 1000}, via_.get());
  for (int i = 0; i < 2; ++i) {
    auto busy = answer(5s, via_.get());
    ASSERT_TRUE(busy) << "no refusal while the workers are paused";
    EXPECT_EQ(busy->outcome, q::Outcome::Busy);
    EXPECT_EQ(busy->message, "too many questions of yours are in progress; try again later");
  }
  ask({.job_id = 8, .uid = 2000}, via_.get());
  ASSERT_TRUE(waitQueued(5)) << queries_->waiting() << " asks queued";
  queries_->pause(false);
  for (int i = 0; i < 5; ++i) {
    auto a = answer(5s, via_.get());
    ASSERT_TRUE(a);
    EXPECT_EQ(a->outcome, q::Outcome::Ok) << a->message;
  }
}

}  // namespace
}  // namespace accel::aggregator
