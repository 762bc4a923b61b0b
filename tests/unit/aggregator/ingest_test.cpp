// Dedupe and batching: exactly the next sequence number of each stream is
// stored; duplicates and gaps are dropped and counted; a reopened database
// remembers what it acknowledged.
#include "accel/aggregator/ingest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "accel/aggregator/cli.h"
#include "accel/common/safe_file.h"
#include "temp_dir.h"

namespace accel::aggregator {
namespace {

using namespace accel::event;

class IngestTest : public ::testing::Test {
 protected:
  void SetUp() override { reopen(); }
  void TearDown() override { (void)tmp_.remove(); }
  void reopen() {
    ingestor_.reset();
    auto s = Store::open(dir_ + "/events.db", Store::Mode::kReadWrite);
    ASSERT_TRUE(s.ok()) << s.error().message();
    store_ = std::move(*s);
    ingestor_ = std::make_unique<Ingestor>(*store_, metrics_, 64 * 1024);
    ASSERT_TRUE(ingestor_->load().ok());
  }
  Offer offer(const std::string& node, uint64_t epoch, uint64_t seq, const Event& ev,
              const std::string& peer = "") {
    auto bytes = encode({node, epoch, seq, 1, 1}, ev);
    return ingestor_->offer(peer.empty() ? node : peer, bytes, 2);
  }
  Offer offerAt(int64_t now_ns, const std::string& node, uint64_t seq, const Event& ev) {
    auto bytes = encode({node, 1, seq, 1, 1}, ev);
    return ingestor_->offer(node, bytes, now_ns);
  }
  std::map<std::string, NodeHeard> nodes() {
    auto rows = store_->readNodes();
    EXPECT_TRUE(rows.ok()) << rows.error().message();
    std::map<std::string, NodeHeard> out;
    if (rows.ok())
      for (auto& r : *rows) out[r.node] = r.heard;
    return out;
  }
  int64_t storedCount() {
    auto rows = store_->readEvents({std::nullopt, std::nullopt, 0, 100000});
    return rows.ok() ? int64_t(rows->size()) : -1;
  }

  support::TempDir tmp_{"accel-ingest-test"};
  std::string dir_ = tmp_.path();
  Metrics metrics_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Ingestor> ingestor_;
};

TEST_F(IngestTest, InOrderEventsAreStoredOnceAndAcknowledged) {
  for (uint64_t q = 1; q <= 5; ++q)
    ASSERT_TRUE(offer("n1", 1, q, TaskStarted{9, 0, uint32_t(q), 1}));
  ASSERT_TRUE(ingestor_->commit(3).ok());
  EXPECT_EQ(ingestor_->acked({"n1", 1}), 5u);
  for (uint64_t q = 1; q <= 5; ++q)
    ASSERT_TRUE(offer("n1", 1, q, TaskStarted{9, 0, uint32_t(q), 1}));
  ASSERT_TRUE(ingestor_->commit(4).ok());
  EXPECT_EQ(storedCount(), 5);
  EXPECT_EQ(metrics_.duplicates, 5u);
  EXPECT_EQ(metrics_.events_in, 5u);
}

// Any accepted event says when a node was last heard from; a heartbeat also
// what it holds and when the next is due. A duplicate says nothing new.
TEST_F(IngestTest, NodesAreKnownByTheirLatestEventAndTheirLatestHeartbeat) {
  constexpr int64_t kS = 1'000'000'000;
  ASSERT_TRUE(offerAt(100 * kS, "n1", 1, AgentStarted{}));
  ASSERT_TRUE(ingestor_->commit(100 * kS).ok());
  auto heard = nodes();
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_EQ(heard["n1"].last_event_ns, 100 * kS);
  EXPECT_FALSE(heard["n1"].heartbeat.has_value());
  EXPECT_EQ(nodeState(heard["n1"], 100 * kS), "no-heartbeat");

  const NodeHeartbeat beat{4, 1, "gpu", 2, 7, 10};
  ASSERT_TRUE(offerAt(200 * kS, "n1", 2, beat));
  ASSERT_TRUE(offerAt(250 * kS, "n2", 1, AgentStarted{}));
  ASSERT_TRUE(ingestor_->commit(250 * kS).ok());
  ASSERT_TRUE(offerAt(900 * kS, "n1", 2, beat));  // again: a duplicate, acknowledged only
  ASSERT_TRUE(ingestor_->commit(900 * kS).ok());
  reopen();
  heard = nodes();
  ASSERT_EQ(heard.size(), 2u);
  EXPECT_EQ(heard["n1"].last_event_ns, 200 * kS);
  ASSERT_TRUE(heard["n1"].heartbeat.has_value());
  EXPECT_EQ(*heard["n1"].heartbeat, beat);
  EXPECT_EQ(heard["n1"].heartbeat_ns, 200 * kS);
  EXPECT_EQ(heard["n2"].last_event_ns, 250 * kS);
  EXPECT_FALSE(heard["n2"].heartbeat.has_value());

  // Alive for three intervals (30 s) after its latest event, late after that.
  EXPECT_EQ(nodeState(heard["n1"], 230 * kS), "alive");
  EXPECT_EQ(nodeState(heard["n1"], 230 * kS + 1), "late");
  // A later event of any kind keeps it alive; the heartbeat's figures stay.
  ASSERT_TRUE(offerAt(240 * kS, "n1", 3, TaskStarted{9, 0, 1, 1}));
  ASSERT_TRUE(ingestor_->commit(240 * kS).ok());
  heard = nodes();
  EXPECT_EQ(nodeState(heard["n1"], 260 * kS), "alive");
  EXPECT_EQ(heard["n1"].heartbeat_ns, 200 * kS);
  EXPECT_EQ(heard["n1"].heartbeat->jobs, 2u);

  // The metric counts them by state, and a restarted aggregator (a new
  // Ingestor over the same store) knows them from its start.
  Metrics restarted;
  Ingestor again(*store_, restarted, 64 * 1024);
  ASSERT_TRUE(again.load().ok());
  for (const Metrics* m : {&metrics_, &restarted}) {
    std::string text = m->render(260 * kS);
    EXPECT_NE(text.find("accel_aggregator_nodes{state=\"alive\"} 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("accel_aggregator_nodes{state=\"no-heartbeat\"} 1\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("accel_aggregator_nodes{state=\"late\"} 0\n"), std::string::npos) << text;
    text = m->render(300 * kS);
    EXPECT_NE(text.find("accel_aggregator_nodes{state=\"late\"} 1\n"), std::string::npos) << text;
  }
}

TEST_F(IngestTest, DuplicateWithinOneBatchIsDropped) {
  ASSERT_TRUE(offer("n1", 1, 1, AgentStarted{}));
  ASSERT_TRUE(offer("n1", 1, 1, AgentStarted{}));
  ASSERT_TRUE(ingestor_->commit(3).ok());
  EXPECT_EQ(storedCount(), 1);
  EXPECT_EQ(metrics_.duplicates, 1u);
}

TEST_F(IngestTest, GapIsNotStoredUntilFilled) {
  ASSERT_TRUE(offer("n1", 1, 1, AgentStarted{}));
  ASSERT_TRUE(offer("n1", 1, 3, AgentStarted{}));  // 2 lost on the way
  ASSERT_TRUE(ingestor_->commit(3).ok());
  EXPECT_EQ(ingestor_->acked({"n1", 1}), 1u);
  EXPECT_EQ(metrics_.rejected[size_t(Reject::kOutOfOrder)], 1u);
  ASSERT_TRUE(offer("n1", 1, 2, AgentStarted{}));
  ASSERT_TRUE(offer("n1", 1, 3, AgentStarted{}));
  ASSERT_TRUE(ingestor_->commit(4).ok());
  EXPECT_EQ(ingestor_->acked({"n1", 1}), 3u);
  EXPECT_EQ(storedCount(), 3);
}

TEST_F(IngestTest, StreamsAreIndependentPerNodeAndEpoch) {
  ASSERT_TRUE(offer("n1", 1, 1, AgentStarted{}));
  ASSERT_TRUE(offer("n1", 2, 1, AgentStarted{}));
  ASSERT_TRUE(offer("n2", 1, 1, AgentStarted{}));
  ASSERT_TRUE(ingestor_->commit(3).ok());
  EXPECT_EQ(storedCount(), 3);
  EXPECT_EQ(metrics_.duplicates, 0u);
}

TEST_F(IngestTest, ProgressSurvivesReopen) {
  for (uint64_t q = 1; q <= 3; ++q) ASSERT_TRUE(offer("n1", 7, q, AgentStarted{}));
  ASSERT_TRUE(ingestor_->commit(3).ok());
  reopen();
  EXPECT_EQ(ingestor_->acked({"n1", 7}), 3u);
  ASSERT_TRUE(offer("n1", 7, 3, AgentStarted{}));
  ASSERT_TRUE(offer("n1", 7, 4, AgentStarted{}));
  ASSERT_TRUE(ingestor_->commit(4).ok());
  EXPECT_EQ(storedCount(), 4);
}

TEST_F(IngestTest, UncommittedBatchIsForgotten) {
  ASSERT_TRUE(offer("n1", 1, 1, AgentStarted{}));
  reopen();  // the batch was never committed
  EXPECT_EQ(ingestor_->acked({"n1", 1}), 0u);
  ASSERT_TRUE(offer("n1", 1, 1, AgentStarted{}));
  ASSERT_TRUE(ingestor_->commit(3).ok());
  EXPECT_EQ(storedCount(), 1);
}

TEST_F(IngestTest, BadFramesAreRejectedByReason) {
  std::vector<uint8_t> big(70 * 1024, 1);
  EXPECT_FALSE(ingestor_->offer("n1", big, 1));
  std::vector<uint8_t> garbage{1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_FALSE(ingestor_->offer("n1", garbage, 1));
  auto good = encode({"n1", 1, 1, 1, 1}, AgentStarted{});
  EXPECT_FALSE(ingestor_->offer("n1", std::span(good.data(), good.size() / 2), 1));
  EXPECT_FALSE(offer("n1", 1, 1, AgentStarted{}, "n2"));  // n2's key speaking for n1
  ASSERT_TRUE(ingestor_->commit(2).ok());
  EXPECT_EQ(storedCount(), 0);
  EXPECT_EQ(metrics_.rejected[size_t(Reject::kOversized)], 1u);
  EXPECT_EQ(metrics_.rejected[size_t(Reject::kInvalid)], 2u);
  EXPECT_EQ(metrics_.rejected[size_t(Reject::kNodeMismatch)], 1u);
}

TEST_F(IngestTest, LastEpilogQueuesTheJobsComment) {
  ASSERT_TRUE(offer("n1", 1, 1, PrologStarted{42, 0, "a", "n[1-2]", 2}));
  ASSERT_TRUE(offer("n1", 1, 2, EpilogFinished{42}));
  ASSERT_TRUE(ingestor_->commit(3).ok());
  EXPECT_EQ(*store_->pendingCount(), 0);
  ASSERT_TRUE(offer("n2", 1, 1, EpilogFinished{42}));
  ASSERT_TRUE(ingestor_->commit(4).ok());
  EXPECT_EQ(*store_->pendingCount(), 1);
  auto job = store_->loadJob(42);
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_EQ((*job)->nodes, (std::set<std::string>{"n1", "n2"}));
}

// The first of two epilogs starts the job's wait in the database, where a
// restart finds it; the second ends it and queues the comment.
TEST_F(IngestTest, FirstOfTwoEpilogsStartsAWaitThatOutlivesARestart) {
  constexpr int64_t kSec = 1'000'000'000;
  ASSERT_TRUE(offer("n1", 1, 1, PrologStarted{42, 0, "a", "n[1-2]", 2}));
  ASSERT_TRUE(ingestor_->offer("n1", encode({"n1", 1, 2, 1, 1}, EpilogFinished{42}), 100 * kSec));
  ASSERT_TRUE(ingestor_->commit(100 * kSec).ok());
  EXPECT_EQ(*store_->pendingCount(), 0);
  EXPECT_EQ(*store_->waitingUntil(42), 400 * kSec);
  reopen();
  EXPECT_EQ(*store_->waitingUntil(42), 400 * kSec);
  EXPECT_EQ(*store_->releaseWaits(399 * kSec), 0);
  ASSERT_TRUE(ingestor_->offer("n2", encode({"n2", 1, 1, 1, 1}, EpilogFinished{42}), 200 * kSec));
  ASSERT_TRUE(ingestor_->commit(200 * kSec).ok());
  EXPECT_EQ(*store_->waitingUntil(42), std::nullopt);
  EXPECT_EQ(*store_->pendingCount(), 1);
  EXPECT_EQ(*store_->releaseWaits(500 * kSec), 0) << "nothing left to release";
}

TEST_F(IngestTest, WaitEndsInTheQueueAndLateEventsGoStraightThere) {
  constexpr int64_t kSec = 1'000'000'000;
  ingestor_ = std::make_unique<Ingestor>(*store_, metrics_, 64 * 1024, std::chrono::seconds(10));
  ASSERT_TRUE(ingestor_->load().ok());
  ASSERT_TRUE(offer("n1", 1, 1, PrologStarted{42, 0, "a", "n[1-3]", 3}));
  ASSERT_TRUE(ingestor_->offer("n1", encode({"n1", 1, 2, 1, 1}, EpilogFinished{42}), 100 * kSec));
  ASSERT_TRUE(ingestor_->commit(100 * kSec).ok());
  EXPECT_EQ(*store_->waitingUntil(42), 110 * kSec);
  EXPECT_EQ(*store_->releaseWaits(109 * kSec), 0);
  EXPECT_EQ(*store_->releaseWaits(110 * kSec), 1);
  EXPECT_EQ(*store_->waitingUntil(42), std::nullopt);
  EXPECT_EQ(*store_->pendingCount(), 1);
  auto due = store_->duePending(110 * kSec, 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 1u);
  ASSERT_TRUE(store_->finishPending(42, (*due)[0].generation).ok());  // written
  // n2's epilog, after the wait: queued at once, no new wait.
  ASSERT_TRUE(ingestor_->offer("n2", encode({"n2", 1, 1, 1, 1}, EpilogFinished{42}), 120 * kSec));
  ASSERT_TRUE(ingestor_->commit(120 * kSec).ok());
  EXPECT_EQ(*store_->waitingUntil(42), std::nullopt);
  EXPECT_EQ(*store_->pendingCount(), 1);
}

TEST_F(IngestTest, SealedBatchCountsOnlyOnceFinished) {
  for (uint64_t q = 1; q <= 3; ++q) ASSERT_TRUE(offer("n1", 1, q, AgentStarted{}));
  auto first = ingestor_->seal(3);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(offer("n1", 1, 4, AgentStarted{}));  // builds on the sealed batch
  EXPECT_EQ(ingestor_->acked({"n1", 1}), 0u);
  Status written = store_->commit(*first);
  ASSERT_TRUE(written.ok());
  ingestor_->finish(*first, written);
  EXPECT_EQ(ingestor_->acked({"n1", 1}), 3u);
  ASSERT_TRUE(ingestor_->commit(4).ok());
  EXPECT_EQ(ingestor_->acked({"n1", 1}), 4u);
  EXPECT_EQ(storedCount(), 4);
  EXPECT_EQ(metrics_.batches, 2u);
}

TEST_F(IngestTest, FailedBatchTakesTheOpenBatchWithIt) {
  for (uint64_t q = 1; q <= 3; ++q) ASSERT_TRUE(offer("n1", 1, q, AgentStarted{}));
  auto first = ingestor_->seal(3);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(offer("n1", 1, 4, AgentStarted{}));
  ingestor_->finish(*first, Error(ErrorCode::kIo, "disk full"));
  EXPECT_EQ(ingestor_->acked({"n1", 1}), 0u);
  EXPECT_EQ(ingestor_->pending(), 0u);
  EXPECT_EQ(metrics_.commit_failures, 1u);
  ASSERT_TRUE(offer("n1", 1, 4, AgentStarted{}));  // 1-3 are not stored: 4 is a gap now
  EXPECT_EQ(metrics_.rejected[size_t(Reject::kOutOfOrder)], 1u);
  for (uint64_t q = 1; q <= 4; ++q)
    ASSERT_TRUE(offer("n1", 1, q, AgentStarted{}));  // the agent resends
  ASSERT_TRUE(ingestor_->commit(4).ok());
  EXPECT_EQ(ingestor_->acked({"n1", 1}), 4u);
  EXPECT_EQ(storedCount(), 4);
}

TEST_F(IngestTest, InterleavedStreamsAreStoredByteForByteWithEachNodesLag) {
  // Envelopes of different sizes from two nodes, interleaved as ROUTER hands them over.
  std::vector<std::vector<uint8_t>> sent;
  for (uint64_t q = 1; q <= 3; ++q)
    for (const std::string node : {"n1", "n2"}) {
      int64_t sent_ns = node == "n1" ? 1'000'000'000 : 3'000'000'000;
      PrologFinished ev{.job_id = uint32_t(q), .message = std::string(q * 40, 'x')};
      sent.push_back(encode({node, 7, q, sent_ns, 1}, ev));
      ASSERT_TRUE(ingestor_->offer(node, sent.back(), 3'500'000'000));
    }
  ASSERT_TRUE(ingestor_->commit(4).ok());
  auto rows = store_->readEvents({std::nullopt, std::nullopt, 0, 100});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) EXPECT_EQ((*rows)[i].envelope, sent[i]) << "row " << i;
  EXPECT_EQ(ingestor_->acked({"n1", 7}), 3u);
  EXPECT_EQ(ingestor_->acked({"n2", 7}), 3u);
  std::string text = metrics_.render();
  EXPECT_NE(text.find("accel_aggregator_node_lag_seconds{node=\"n1\"} 2.5\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("accel_aggregator_node_lag_seconds{node=\"n2\"} 0.5\n"), std::string::npos)
      << text;
  // The largest of them, for one alert over the whole fleet.
  EXPECT_NE(text.find("\naccel_aggregator_lag_seconds 2.5\n"), std::string::npos) << text;
}

TEST_F(IngestTest, SealWithOnlyDuplicatesGivesNoBatch) {
  ASSERT_TRUE(offer("n1", 1, 1, AgentStarted{}));
  ASSERT_TRUE(ingestor_->commit(3).ok());
  ASSERT_TRUE(offer("n1", 1, 1, AgentStarted{}));
  EXPECT_FALSE(ingestor_->seal(4).has_value());
  EXPECT_EQ(metrics_.duplicates, 1u);
}

TEST_F(IngestTest, EventsOfOneJobAreReadWithinItsSpan) {
  uint64_t q = 0;
  ASSERT_TRUE(offer("n1", 1, ++q, AgentStarted{}));
  for (uint32_t t = 0; t < 3; ++t) {
    ASSERT_TRUE(offer("n1", 1, ++q, TaskStarted{7, 0, t, 1}));
    ASSERT_TRUE(offer("n1", 1, ++q, TaskStarted{8, 0, t, 1}));
    ASSERT_TRUE(ingestor_->commit(int64_t(q)).ok());  // spans grow over several commits
  }
  auto rows = store_->readEvents({7, std::nullopt, 0, 100});
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  ASSERT_EQ(rows->size(), 3u);
  for (const auto& e : *rows) EXPECT_EQ(e.job_id, 7u);
  EXPECT_LT((*rows)[0].row, (*rows)[1].row);
  auto after = store_->readEvents({7, std::nullopt, (*rows)[0].row, 100});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size(), 2u);
  auto none = store_->readEvents({9, std::nullopt, 0, 100});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// An envelope whose header reads but whose event does not verify: the user
// name's length is made to run past the end of the buffer.
std::vector<uint8_t> corruptEvent(const std::string& node, uint64_t epoch, uint64_t seq) {
  auto bytes = encode({node, epoch, seq, 1, 1}, PrologStarted{7, 0, "uuuuuuuu", "", 0});
  const uint8_t needle[] = {8, 0, 0, 0, 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u'};
  auto at = std::search(bytes.begin(), bytes.end(), std::begin(needle), std::end(needle));
  EXPECT_NE(at, bytes.end());
  if (at != bytes.end()) at[3] = 0x7f;
  return bytes;
}

TEST_F(IngestTest, ARefusedFrameIsNackedAndTheStreamGoesOnPastIt) {
  ASSERT_TRUE(offer("n1", 1, 1, AgentStarted{}));
  auto bad = corruptEvent("n1", 1, 2);
  ASSERT_FALSE(decode(bad).ok());
  Offer refused = ingestor_->offer("n1", bad, 2);
  ASSERT_TRUE(refused.nack);
  EXPECT_EQ(refused.nack->reason, NackReason::kInvalid);
  EXPECT_EQ(refused.nack->epoch, 1u);
  EXPECT_EQ(refused.nack->seq, 2u);
  EXPECT_TRUE(refused.nack->skipped);
  ASSERT_TRUE(refused.ack);
  EXPECT_EQ(*refused.ack, (StreamKey{"n1", 1}));
  Offer next = offer("n1", 1, 3, AgentStarted{});  // the frame behind it
  EXPECT_TRUE(next);
  EXPECT_FALSE(next.nack);
  ASSERT_TRUE(ingestor_->commit(3).ok());
  EXPECT_EQ(ingestor_->acked({"n1", 1}), 3u);  // the Ack covers the refused frame
  EXPECT_EQ(storedCount(), 2);
  // Sent again (the agent missed the Nack): a duplicate, acknowledged, not stored.
  EXPECT_FALSE(ingestor_->offer("n1", bad, 4).ack == std::nullopt);
  ASSERT_TRUE(ingestor_->commit(5).ok());
  EXPECT_EQ(storedCount(), 2);
}

TEST_F(IngestTest, AnUnreadableFrameIsNackedWithoutAStream) {
  std::vector<uint8_t> garbage{0x13, 0x37, 0, 0, 'A', 'C', 'E', 'V', 0xff, 0xff};
  Offer o = ingestor_->offer("n1", garbage, 1);
  ASSERT_TRUE(o.nack);
  EXPECT_EQ(o.nack->reason, NackReason::kUnreadable);
  EXPECT_EQ(o.nack->seq, 0u);
  EXPECT_FALSE(o.nack->skipped);
  EXPECT_FALSE(o.ack);
  EXPECT_TRUE(offer("n1", 1, 1, AgentStarted{}));
  ASSERT_TRUE(ingestor_->commit(2).ok());
  EXPECT_EQ(ingestor_->acked({"n1", 1}), 1u);
}

TEST_F(IngestTest, AFrameNamingAnotherNodeMovesNoStream) {
  ASSERT_TRUE(offer("n2", 1, 1, AgentStarted{}));
  Offer o = offer("n2", 1, 2, AgentStarted{}, "n1");  // n1's key speaking for n2
  ASSERT_TRUE(o.nack);
  EXPECT_EQ(o.nack->reason, NackReason::kNodeMismatch);
  EXPECT_FALSE(o.nack->skipped);
  EXPECT_FALSE(o.ack);
  EXPECT_TRUE(offer("n2", 1, 2, AgentStarted{}));  // n2's own frame 2 is still wanted
  ASSERT_TRUE(ingestor_->commit(2).ok());
  EXPECT_EQ(ingestor_->acked({"n2", 1}), 2u);
  EXPECT_EQ(storedCount(), 2);
}

TEST_F(IngestTest, ANodeReportsOnlyJobsThatRanOnIt) {
  ASSERT_TRUE(offer("n1", 1, 1, PrologStarted{42, 0, "a", "n[1-2]", 2}));
  // n3 is not on job 42: its epilog and a prolog naming other nodes are refused.
  Offer epilog = offer("n3", 1, 1, EpilogFinished{42, JobResult::kFailed});
  ASSERT_TRUE(epilog.nack);
  EXPECT_EQ(epilog.nack->reason, NackReason::kNotOnJob);
  EXPECT_TRUE(epilog.nack->skipped);
  EXPECT_EQ(epilog.job_id, 42u);
  EXPECT_NE(epilog.nack->message.find("n3"), std::string::npos) << epilog.nack->message;
  Offer prolog = offer("n3", 1, 2, PrologStarted{42, 0, "a", "n[3-4]", 2});
  ASSERT_TRUE(prolog.nack);
  EXPECT_EQ(prolog.nack->reason, NackReason::kNotOnJob);
  // A prolog whose list does not name its own node is refused too.
  EXPECT_TRUE(offer("n3", 1, 3, PrologStarted{43, 0, "a", "n[1-2]", 2}).nack);
  // n3's own job and the listed node's events go on.
  EXPECT_TRUE(offer("n3", 1, 4, PrologStarted{44, 0, "b", "n3", 1}));
  EXPECT_TRUE(offer("n2", 1, 1, PrologStarted{42, 0, "a", "n[1-2]", 2}));
  EXPECT_TRUE(offer("n2", 1, 2, EpilogFinished{42}));
  ASSERT_TRUE(ingestor_->commit(3).ok());
  EXPECT_EQ(ingestor_->acked({"n3", 1}), 4u);
  EXPECT_EQ(metrics_.rejected[size_t(Reject::kNotOnJob)], 3u);
  auto job = store_->loadJob(42);
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_EQ((*job)->nodes, (std::set<std::string>{"n1", "n2"}));
  EXPECT_EQ((*job)->result, JobResult::kOk);  // n3's failure did not count
}

// A node's key speaks for that node's jobs only: once job 42 has run on n1
// and n2 and is over, n3 cannot pass its own prolog off as a later run of the
// job with the same restart count, nor change the job's result afterwards.
// Its prolog may be a new job's under a reused id, so it and n3's later
// events for the job are held for slurmctld (nothing here asks it: they stay
// held; held_runs_test.cpp has the answers): stored and acknowledged, never
// counted. An epilog of n3 alone is refused outright.
TEST_F(IngestTest, AnotherNodesPrologForAFinishedJobIsRefused) {
  for (const std::string node : {"n1", "n2"}) {
    ASSERT_TRUE(offer(node, 1, 1, PrologStarted{42, 0, "a", "n[1-2]", 2}));
    ASSERT_TRUE(offer(node, 1, 2, EpilogFinished{42}));
  }
  ASSERT_TRUE(ingestor_->commit(3).ok());
  auto before = store_->loadJob(42);
  ASSERT_TRUE(before.ok() && before->has_value() && (*before)->complete());
  Offer epilog = offer("n4", 1, 1, EpilogFinished{42, JobResult::kFailed, 1, "", false, 99999});
  ASSERT_TRUE(epilog.nack);
  EXPECT_EQ(epilog.nack->reason, NackReason::kNotOnJob);
  EXPECT_TRUE(epilog.nack->skipped);
  EXPECT_FALSE(offer("n3", 1, 1, PrologStarted{42, 0, "a", "n3", 1}).nack);
  EXPECT_FALSE(
      offer("n3", 1, 2, PrologFinished{42, JobResult::kFailed, {}, "", 1, "forged", "ipu"}).nack);
  EXPECT_FALSE(offer("n3", 1, 3, EpilogFinished{42, JobResult::kFailed, 1, "", false, 99999}).nack);
  ASSERT_TRUE(ingestor_->commit(4).ok());
  EXPECT_EQ(ingestor_->acked({"n3", 1}), 3u) << "held frames are acknowledged, not stuck";
  EXPECT_EQ(ingestor_->acked({"n4", 1}), 1u) << "refused frames are skipped, not stuck";
  auto after = store_->loadJob(42);
  ASSERT_TRUE(after.ok() && after->has_value());
  EXPECT_EQ((*after)->held.size(), 3u);
  JobSummary counted = **after;
  counted.held.clear();
  EXPECT_EQ(counted, **before) << "the summary is untouched";
  EXPECT_EQ(storedCount(), 7);
}

// A larger restart count is a new run, but nothing here can confirm it (no
// slurmctld is asked): its events are stored and acknowledged, and the
// summary stays what the first run made it.
TEST_F(IngestTest, ANewRunDoesNotCountUntilSlurmctldConfirmsIt) {
  ASSERT_TRUE(offer("n1", 1, 1, PrologStarted{42, 0, "a", "n1", 1, 0}));
  ASSERT_TRUE(offer("n1", 1, 2, EpilogFinished{42}));
  ASSERT_TRUE(ingestor_->commit(3).ok());
  auto before = store_->loadJob(42);
  ASSERT_TRUE(before.ok() && before->has_value());
  EXPECT_TRUE(offer("n2", 1, 1, PrologStarted{42, 0, "a", "n2", 1, 1}));
  EXPECT_TRUE(offer("n2", 1, 2, PrologFinished{42, JobResult::kFailed, {}, "", 1, "x", "ipu"}));
  EXPECT_TRUE(offer("n2", 1, 3, EpilogFinished{42, JobResult::kFailed, 1, "", false, 500, 1}));
  ASSERT_TRUE(ingestor_->commit(4).ok());
  EXPECT_EQ(ingestor_->acked({"n2", 1}), 3u);
  EXPECT_EQ(storedCount(), 5);
  auto after = store_->loadJob(42);
  ASSERT_TRUE(after.ok() && after->has_value());
  EXPECT_EQ((*after)->restarts, 0u);
  EXPECT_EQ((*after)->nodes, (*before)->nodes);
  EXPECT_EQ((*after)->result, JobResult::kOk);
  EXPECT_EQ((*after)->applianceSeconds(), 0u);
  EXPECT_EQ(toCommentJson(**after), toCommentJson(**before));
}

// Without a usable node list (here two bracket groups in one name) the job
// is the node's that reported it: its events count, no other node's.
TEST_F(IngestTest, AnUnusableNodeListCountsForTheSenderOnly) {
  const PrologStarted first{42, 0, "a", "g[1-2]x[1-2]", 4};
  ASSERT_TRUE(offer("g1", 1, 1, first));
  ASSERT_TRUE(offer("g1", 1, 2, PrologFinished{42, JobResult::kOk, {"0"}, "", 1, "", "gpu"}));
  EXPECT_TRUE(offer("g2", 1, 1, first).nack);
  EXPECT_TRUE(offer("g2", 1, 2, EpilogFinished{42, JobResult::kFailed, 1, "", false, 777}).nack);
  ASSERT_TRUE(offer("g1", 1, 3, EpilogFinished{42}));
  ASSERT_TRUE(ingestor_->commit(3).ok());
  EXPECT_EQ(metrics_.rejected[size_t(Reject::kNotOnJob)], 2u);
  auto job = store_->loadJob(42);
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_EQ((*job)->nodes, (std::set<std::string>{"g1"}));
  EXPECT_EQ((*job)->result, JobResult::kOk);
  EXPECT_TRUE((*job)->cleanup_failed.empty());
  EXPECT_EQ((*job)->applianceSeconds(), 0u);
}

}  // namespace
}  // namespace accel::aggregator
