// A new run of a requeued job through the Ingestor: its events are stored
// and acknowledged at once, held out of the summary, and counted once
// slurmctld confirms the run (FakeRunChecks stands in for the lookup thread);
// a run slurmctld does not confirm never counts, also across a restart.
#include <gtest/gtest.h>

#include "accel/aggregator/ingest.h"
#include "fake_run_checks.h"
#include "temp_dir.h"

namespace accel::aggregator {
namespace {

using namespace accel::event;
constexpr int64_t kSec = 1'000'000'000;

class HeldRunsTest : public ::testing::Test {
 protected:
  void SetUp() override { reopen(); }
  void TearDown() override { (void)tmp_.remove(); }
  void reopen() {
    ingestor_.reset();
    auto s = Store::open(tmp_.path() + "/events.db", Store::Mode::kReadWrite);
    ASSERT_TRUE(s.ok()) << s.error().message();
    store_ = std::move(*s);
    ingestor_ =
        std::make_unique<Ingestor>(*store_, metrics_, 64 * 1024, kDefaultSummaryWait, &runs_);
    ASSERT_TRUE(ingestor_->load().ok());
  }
  // One event of `node` (stream epoch 1) received at `at`.
  Offer send(const std::string& node, const Event& ev, int64_t at) {
    return ingestor_->offer(node, encode({node, 1, ++seq_[node], 1, 1}, ev), at);
  }
  void commit(int64_t at) { ASSERT_TRUE(ingestor_->commit(at).ok()); }
  JobSummary job42() {
    auto job = store_->loadJob(42);
    EXPECT_TRUE(job.ok() && job->has_value());
    return job.ok() && job->has_value() ? **job : JobSummary{};
  }
  // Job 42's first run, on n1, is over.
  void firstRunOnN1() {
    ASSERT_TRUE(send("n1", PrologStarted{42, 1000, "alice", "n1", 1, 0}, 10 * kSec));
    ASSERT_TRUE(send("n1", EpilogFinished{42, JobResult::kOk, 1, "", true, 30, 0}, 20 * kSec));
    commit(20 * kSec);
  }

  support::TempDir tmp_{"accel-held-runs-test"};
  Metrics metrics_;
  FakeRunChecks runs_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Ingestor> ingestor_;
  std::map<std::string, uint64_t> seq_;
};

// Requeued onto n2: its prolog carries restart count 1. Stored and
// acknowledged at once, it counts only once slurmctld says run 1 is on n2.
TEST_F(HeldRunsTest, ALargerRestartCountCountsOnceSlurmctldConfirmsIt) {
  firstRunOnN1();
  const JobSummary before = job42();
  Offer prolog = send("n2", PrologStarted{42, 1000, "alice", "n2", 1, 1}, 100 * kSec);
  EXPECT_TRUE(prolog);
  EXPECT_FALSE(prolog.nack);
  ASSERT_TRUE(
      send("n2", PrologFinished{42, JobResult::kFailed, {}, "", 1, "boom", "ipu"}, 101 * kSec));
  commit(101 * kSec);
  EXPECT_EQ(ingestor_->acked({"n2", 1}), 2u);
  ASSERT_EQ(runs_.asks.size(), 2u);
  EXPECT_EQ(runs_.asks[0], (std::pair<uint32_t, int64_t>{42, 100 * kSec}));
  JobSummary held = job42();
  EXPECT_EQ(held.held.size(), 2u);
  held.held.clear();
  EXPECT_EQ(held, before) << "nothing of the run counts yet";
  EXPECT_EQ(metrics_.held_jobs, 1);

  runs_.answer(42, 1, {"n2"}, 102 * kSec);
  EXPECT_TRUE(ingestor_->settle(102 * kSec));
  commit(102 * kSec);
  JobSummary now = job42();
  EXPECT_TRUE(now.held.empty());
  EXPECT_EQ(now.restarts, 1u);
  EXPECT_EQ(now.nodes, (std::set<std::string>{"n1", "n2"}));
  EXPECT_EQ(now.result, JobResult::kFailed);
  EXPECT_EQ(now.errors.at("n2"), "boom");
  EXPECT_EQ(metrics_.held_jobs, 0);
  // From now on n2 reports its run directly.
  ASSERT_TRUE(send("n2", EpilogFinished{42, JobResult::kOk, 1, "", true, 5, 1}, 110 * kSec));
  commit(110 * kSec);
  EXPECT_EQ(job42().runSeconds(), (std::vector<uint64_t>{30, 5}));
  EXPECT_EQ(runs_.asks.size(), 2u) << "no more lookups";
  EXPECT_EQ(metrics_.runs_unconfirmed, 0u);
}

// n3's key claims a run 1 of the finished job 42. slurmctld says the job
// ran once, on n1: the claim is dropped, the summary never changes, and
// holding it did not queue the job's comment again.
TEST_F(HeldRunsTest, ARunSlurmctldDoesNotConfirmNeverCounts) {
  firstRunOnN1();
  ASSERT_EQ(*store_->pendingCount(), 1);
  auto due = store_->duePending(30 * kSec, 10);
  ASSERT_TRUE(due.ok() && due->size() == 1u);
  ASSERT_TRUE(store_->finishPending(42, (*due)[0].generation).ok());  // written
  const JobSummary before = job42();
  ASSERT_TRUE(send("n3", PrologStarted{42, 1000, "alice", "n3", 1, 1}, 100 * kSec));
  ASSERT_TRUE(
      send("n3", EpilogFinished{42, JobResult::kFailed, 1, "", false, 99999, 1}, 100 * kSec));
  commit(100 * kSec);
  EXPECT_EQ(*store_->pendingCount(), 0) << "held events queue no comment";
  runs_.answer(42, 0, {"n1"}, 101 * kSec);
  EXPECT_TRUE(ingestor_->settle(101 * kSec));
  commit(101 * kSec);
  EXPECT_EQ(job42(), before);
  EXPECT_EQ(*store_->pendingCount(), 0);
  EXPECT_EQ(metrics_.runs_unconfirmed, 2u);
  uint64_t more = 0;
  auto dropped = ingestor_->takeUnconfirmed(&more);
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_EQ(more, 0u);
  EXPECT_EQ(dropped[0].job_id, 42u);
  EXPECT_EQ(dropped[0].node, "n3");
  EXPECT_NE(dropped[0].why.find("run 1"), std::string::npos) << dropped[0].why;
  // Nothing is held any more, also after a restart.
  reopen();
  runs_.asks.clear();
  EXPECT_FALSE(ingestor_->settle(200 * kSec));
  EXPECT_TRUE(runs_.asks.empty());
}

// While slurmctld cannot be asked (or has not answered yet) the events stay
// held, the job is asked about again once a second, and a restart of the
// aggregator keeps them and asks again. An answer older than the events
// neither confirms nor drops them.
TEST_F(HeldRunsTest, HeldEventsWaitForAnAnswerAcrossARestart) {
  firstRunOnN1();
  ASSERT_TRUE(send("n2", PrologStarted{42, 1000, "alice", "n2", 1, 1}, 100 * kSec));
  commit(100 * kSec);
  runs_.asks.clear();
  EXPECT_FALSE(ingestor_->settle(100 * kSec + 1));
  EXPECT_EQ(runs_.asks.size(), 1u);
  EXPECT_FALSE(ingestor_->settle(100 * kSec + kSec / 2));
  EXPECT_EQ(runs_.asks.size(), 1u) << "once a second";
  runs_.answer(42, 0, {"n1"}, 99 * kSec);  // from before the prolog came
  EXPECT_FALSE(ingestor_->settle(101 * kSec + 1));
  EXPECT_EQ(runs_.asks.size(), 2u);
  EXPECT_EQ(runs_.asks.back(), (std::pair<uint32_t, int64_t>{42, 100 * kSec}));
  EXPECT_EQ(job42().held.size(), 1u);

  reopen();
  EXPECT_EQ(metrics_.held_jobs, 1);
  runs_.asks.clear();
  EXPECT_FALSE(ingestor_->settle(300 * kSec));
  ASSERT_EQ(runs_.asks.size(), 1u);
  EXPECT_EQ(runs_.asks[0].first, 42u);
  runs_.answer(42, 1, {"n2"}, 301 * kSec);
  EXPECT_TRUE(ingestor_->settle(301 * kSec));
  commit(301 * kSec);
  EXPECT_EQ(job42().restarts, 1u);
  EXPECT_TRUE(job42().held.empty());
  reopen();
  EXPECT_EQ(metrics_.held_jobs, 0);
}

// A run's nodes each send their prolog; one answer settles every one held,
// and a node of the run that reports later is let in directly.
TEST_F(HeldRunsTest, OneAnswerSettlesEveryNodeOfTheRun) {
  firstRunOnN1();
  const PrologStarted run1{42, 1000, "alice", "n[2-4]", 3, 1};
  ASSERT_TRUE(send("n2", run1, 100 * kSec));
  ASSERT_TRUE(send("n3", run1, 100 * kSec));
  runs_.answer(42, 1, {"n2", "n3", "n4"}, 101 * kSec);
  EXPECT_TRUE(ingestor_->settle(101 * kSec));
  ASSERT_TRUE(send("n4", run1, 102 * kSec));
  for (const std::string node : {"n2", "n3", "n4"})
    ASSERT_TRUE(send(node, EpilogFinished{42, JobResult::kOk, 1, "", true, 0, 1}, 103 * kSec));
  commit(103 * kSec);
  JobSummary s = job42();
  EXPECT_TRUE(s.held.empty());
  EXPECT_EQ(s.nodes, (std::set<std::string>{"n1", "n2", "n3", "n4"}));
  EXPECT_EQ(s.epilog_nodes, (std::set<std::string>{"n1", "n2", "n3", "n4"}));
}

// Job 42 ran for alice on n1 and is over; much later the id is given to
// bob's job on n1 (slurmctld's state was lost). Its prolog is held until
// slurmctld says the job under the id started after alice's job ended; then
// alice's record is archived, bob's begins afresh, and the events of the id
// are bob's from his prolog's arrival on: alice no longer owns them.
TEST_F(HeldRunsTest, AReusedIdBeginsANewRecordOnceSlurmctldConfirmsIt) {
  firstRunOnN1();
  const JobSummary alices = job42();
  ASSERT_TRUE(send("n1", PrologStarted{42, 2000, "bob", "n1", 1, 0}, 500 * kSec));
  ASSERT_TRUE(send("n1", EpilogFinished{42, JobResult::kFailed, 1, "", true, 0, 0}, 510 * kSec));
  commit(510 * kSec);
  JobSummary held = job42();
  EXPECT_EQ(held.held.size(), 2u);
  held.held.clear();
  EXPECT_EQ(held, alices) << "nothing of bob's job counts yet";
  auto owner = store_->jobOwner(42);
  ASSERT_TRUE(owner.ok());
  EXPECT_EQ(*owner, std::optional<uint32_t>(1000));
  auto since = store_->heldSince(42);
  ASSERT_TRUE(since.ok());
  EXPECT_EQ(*since, std::optional<int64_t>(500 * kSec));

  runs_.answer(42, 0, {"n1"}, 511 * kSec, 499);
  EXPECT_TRUE(ingestor_->settle(511 * kSec));
  commit(511 * kSec);
  EXPECT_EQ(metrics_.reused_job_ids, 1u);
  JobSummary bobs = job42();
  EXPECT_EQ(bobs.instance, 1u);
  EXPECT_EQ(bobs.result, JobResult::kFailed);
  EXPECT_TRUE(bobs.held.empty());
  EXPECT_TRUE(bobs.complete());
  auto archived = store_->archivedJobs(42);
  ASSERT_TRUE(archived.ok());
  ASSERT_EQ(archived->size(), 1u);
  EXPECT_EQ(archived->front(), alices);
  auto latest = store_->jobInstance(42);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(*latest, std::optional<JobInstance>(JobInstance{42, 1, 500 * kSec, 2000}));
  owner = store_->jobOwner(42);
  ASSERT_TRUE(owner.ok());
  EXPECT_EQ(*owner, std::optional<uint32_t>(2000));
  EventFilter bobs_events;
  bobs_events.job_id = 42;
  bobs_events.since_ns = (*latest)->since_ns;
  auto rows = store_->readEvents(bobs_events);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ(rows->front().kind, "prolog_started");
  EXPECT_EQ(rows->front().received_ns, 500 * kSec);
  // Across a restart, the records stay apart.
  reopen();
  EXPECT_EQ(job42(), bobs);
}

// A replay of alice's prolog by n1's key after her job ended, while
// slurmctld still holds her job: it started before her epilog. Dropped.
TEST_F(HeldRunsTest, AReplayOfAnEndedJobsPrologNeverCounts) {
  firstRunOnN1();
  const JobSummary alices = job42();
  ASSERT_TRUE(send("n1", PrologStarted{42, 1000, "alice", "n1", 1, 0}, 30 * kSec));
  ASSERT_TRUE(send("n1", EpilogFinished{42, JobResult::kFailed, 1, "", true, 999, 0}, 31 * kSec));
  commit(31 * kSec);
  runs_.answer(42, 0, {"n1"}, 32 * kSec, 9);
  EXPECT_TRUE(ingestor_->settle(32 * kSec));
  commit(32 * kSec);
  EXPECT_EQ(metrics_.reused_job_ids, 0u);
  EXPECT_EQ(metrics_.runs_unconfirmed, 2u);
  EXPECT_EQ(job42(), alices);
  auto latest = store_->jobInstance(42);
  ASSERT_TRUE(latest.ok());
  EXPECT_FALSE(*latest);
}

}  // namespace
}  // namespace accel::aggregator
