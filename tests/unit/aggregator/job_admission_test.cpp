// Which node may report what of a job (job_admission.h), on summaries alone:
// a node speaks for the jobs that ran on it, an unusable node list counts for
// the node that sent it, and a new run counts once slurmctld confirms it.
#include "accel/aggregator/job_admission.h"

#include <gtest/gtest.h>

#include "accel/events/codec.h"

namespace accel::aggregator {
namespace {

using namespace accel::event;
constexpr int64_t kSec = 1'000'000'000;

// Job 42 ran on n1 and n2 and is over: both epilogs are in.
JobSummary finishedJob() {
  JobSummary s;
  s.job_id = 42;
  for (const std::string n : {"n1", "n2"}) {
    mergeEvent(s, n, PrologStarted{42, 1000, "alice", "n[1-2]", 2});
    mergeEvent(s, n, EpilogFinished{42});
  }
  return s;
}

Admission admission(const JobSummary& s, const std::string& node, const Event& ev,
                    const RunAnswer* answer = nullptr) {
  return admit(s, node, ev, 100 * kSec, answer).admission;
}

RunAnswer slurmctldSays(uint32_t restarts, std::vector<std::string> nodes,
                        int64_t as_of = 101 * kSec) {
  return {42, true, JobRun{restarts, true, std::move(nodes)}, as_of};
}

// n3 holds a valid key but never ran job 42. Whatever the job's state, it
// cannot start a run of it with the run count already known.
// Its prolog may be a new job's under the same id: held for slurmctld, whose
// word on the job it claims (the old job, still known) refuses it.
TEST(JobAdmission, AnotherNodesPrologOfTheSameRunIsRefusedAfterTheRunToo) {
  JobSummary s = finishedJob();
  ASSERT_TRUE(s.complete());
  const PrologStarted forged{42, 1000, "alice", "n3", 1, 0};
  EXPECT_EQ(admission(s, "n3", forged), Admission::kHold);
  RunAnswer old = slurmctldSays(0, {"n1", "n2"});
  Verdict v = admit(s, "n3", forged, 100 * kSec, &old);
  EXPECT_EQ(v.admission, Admission::kRefuse);
  EXPECT_NE(v.why.find("n3"), std::string::npos) << v.why;
  EXPECT_EQ(admission(s, "n3", EpilogFinished{42, JobResult::kFailed}), Admission::kRefuse);
  // A list of other nodes may be a new job's too; slurmctld's word on the
  // job it holds refuses it.
  const PrologStarted wider{42, 1000, "alice", "n[1-3]", 3, 0};
  EXPECT_EQ(admission(s, "n3", wider), Admission::kHold);
  EXPECT_EQ(admission(s, "n3", wider, &old), Admission::kRefuse);
  // The job's own nodes still report it (a resent epilog, say).
  EXPECT_EQ(admission(s, "n2", EpilogFinished{42}), Admission::kApply);
}

// A larger restart count is a new run: held until slurmctld says that run is
// the one it holds, on the sender, on exactly the nodes the prolog lists.
TEST(JobAdmission, ANewRunIsHeldUntilSlurmctldConfirmsIt) {
  JobSummary s = finishedJob();
  const PrologStarted next{42, 1000, "alice", "n[3-4]", 2, 1};
  EXPECT_EQ(admission(s, "n3", next), Admission::kHold);
  RunAnswer yes = slurmctldSays(1, {"n3", "n4"});
  Verdict v = admit(s, "n3", next, 100 * kSec, &yes);
  EXPECT_EQ(v.admission, Admission::kApply);
  EXPECT_TRUE(v.confirmed_run);
  // An old answer confirms as well as a new one: the run's nodes do not change.
  RunAnswer old_yes = slurmctldSays(1, {"n3", "n4"}, 50 * kSec);
  EXPECT_EQ(admission(s, "n3", next, &old_yes), Admission::kApply);

  struct Case {
    const char* what;
    RunAnswer answer;
    Admission expected;
  };
  const Case cases[] = {
      {"slurmctld still at run 0", slurmctldSays(0, {"n1", "n2"}), Admission::kRefuse},
      {"run 1 on other nodes", slurmctldSays(1, {"n5", "n6"}), Admission::kRefuse},
      {"run 1 on n3 alone: the list disagrees", slurmctldSays(1, {"n3"}), Admission::kRefuse},
      {"slurmctld at run 2 already", slurmctldSays(2, {"n3", "n4"}), Admission::kRefuse},
      {"the job unknown to slurmctld", RunAnswer{42, false, {}, 101 * kSec}, Admission::kRefuse},
      {"run 1 pending", RunAnswer{42, true, JobRun{1, false, {}}, 101 * kSec}, Admission::kRefuse},
      {"an answer from before the event", slurmctldSays(0, {"n1", "n2"}, 99 * kSec),
       Admission::kHold},
      {"unknown before the event", RunAnswer{42, false, {}, 99 * kSec}, Admission::kHold},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(admission(s, "n3", next, &c.answer), c.expected);
  }
  // The same holds of an epilog naming a new run.
  EXPECT_EQ(admission(s, "n3", EpilogFinished{42, JobResult::kFailed, 1, "", true, 9, 1}),
            Admission::kHold);
  // Requeued onto the same nodes: a new run too.
  EXPECT_EQ(admission(s, "n1", PrologStarted{42, 1000, "alice", "n[1-2]", 2, 1}), Admission::kHold);
}

// A node list that cannot be used makes the job the first reporter's: its
// events count, nobody else's do.
TEST(JobAdmission, AnUnusableNodeListCountsForItsSenderOnly) {
  const std::pair<std::string, uint32_t> lists[] = {
      {"g[1-2]", 0},        // no count
      {"g[1-2]x[1-2]", 4},  // two bracket groups in one name
      {"g[0-99999]", 2},    // too long
      {"g[1-3]", 2},        // disagrees with the count
      {"", 2},              // no list
  };
  for (const auto& [list, count] : lists) {
    SCOPED_TRACE(list);
    JobSummary s;
    s.job_id = 9;
    const PrologStarted first{9, 1000, "bob", list, count};
    ASSERT_EQ(admission(s, "g1", first), Admission::kApply);
    mergeEvent(s, "g1", first);
    EXPECT_TRUE(s.listed_nodes.empty());
    EXPECT_EQ(admission(s, "g1", PrologFinished{9, JobResult::kOk, {"0"}, "", 1, "", "gpu"}),
              Admission::kApply);
    EXPECT_EQ(admission(s, "g1", EpilogFinished{9}), Admission::kApply);
    EXPECT_EQ(admission(s, "g2", first), Admission::kRefuse);
    Verdict v = admit(s, "g2", EpilogFinished{9, JobResult::kFailed}, 100 * kSec);
    EXPECT_EQ(v.admission, Admission::kRefuse);
    EXPECT_NE(v.why.find("g1"), std::string::npos) << v.why;
    EXPECT_EQ(admission(s, "g2", ApplianceJobChanged{9, "w", ApplianceState::kRunning, 1, 99}),
              Admission::kRefuse);
  }
}

// Before any node reported a run of the job (its prolog, say), events of any
// node are taken (tasks of a job whose prologs were never seen); a state
// stored before node_run was kept goes by the nodes it names.
TEST(JobAdmission, BeforeAnyRunIsReportedAnyNodeMayReport) {
  JobSummary s;
  s.job_id = 9;
  mergeEvent(s, "g1", TaskStarted{9, 0, 1, 1});
  EXPECT_EQ(admission(s, "g2", TaskStarted{9, 0, 2, 1}), Admission::kApply);
  auto old = fromStateJson(
      R"({"accel_count":0,"accel_kind":"","appliance_limit_s":0,"appliance_s":{},)"
      R"("cleanup_failed":[],"epilog_nodes":["g1"],"job_id":9,"node_count":2,"nodes":["g1"],)"
      R"("node_list":"g[1-2]x[1]","partition":"","result":0,"surrogate_steps":[]})");
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_TRUE(old->listed_nodes.empty());
  EXPECT_EQ(admission(*old, "g1", EpilogFinished{9}), Admission::kApply);
  EXPECT_EQ(admission(*old, "g2", EpilogFinished{9, JobResult::kFailed}), Admission::kRefuse);
}

// Held events are weighed in the order they came: a confirmed run's are
// merged and its nodes may report the job from then on; a disproved run's
// are dropped; the rest wait.
TEST(JobAdmission, HeldEventsSettleInOrderOnceAnswered) {
  JobSummary s = finishedJob();
  auto envelope = [](const std::string& node, uint64_t seq, const Event& ev) {
    return encode({node, 1, seq, 1, 1}, ev);
  };
  const PrologStarted real{42, 1000, "alice", "n[3-4]", 2, 1};
  const PrologStarted forged{42, 1000, "alice", "n5", 1, 1};
  ASSERT_TRUE(hold(s, "n3", 100 * kSec, envelope("n3", 1, real)));
  ASSERT_TRUE(hold(s, "n5", 100 * kSec, envelope("n5", 1, forged)));
  ASSERT_TRUE(hold(
      s, "n3", 101 * kSec,
      envelope("n3", 2, PrologFinished{42, JobResult::kFailed, {}, "", 1, "vipu: busy", "ipu"})));
  ASSERT_TRUE(hold(s, "n5", 101 * kSec, envelope("n5", 2, EpilogFinished{42, JobResult::kFailed})));
  EXPECT_TRUE(s.holdsFrom("n3"));
  EXPECT_EQ(admission(s, "n3", EpilogFinished{42}), Admission::kHold) << "behind its held events";

  Settled early = settleHeld(s, slurmctldSays(0, {"n1", "n2"}, 90 * kSec));
  EXPECT_FALSE(early.merged);
  EXPECT_TRUE(early.dropped.empty());
  EXPECT_EQ(early.newest_held_ns, 101 * kSec);
  EXPECT_EQ(s.held.size(), 4u);

  Settled out = settleHeld(s, slurmctldSays(1, {"n3", "n4"}));
  EXPECT_TRUE(out.merged);
  ASSERT_EQ(out.dropped.size(), 2u);
  EXPECT_EQ(out.dropped[0].node, "n5");
  EXPECT_EQ(out.dropped[1].node, "n5");
  EXPECT_TRUE(s.held.empty());
  EXPECT_EQ(s.restarts, 1u);
  EXPECT_EQ(s.result, JobResult::kFailed);
  EXPECT_EQ(s.errors, (std::map<std::string, std::string>{{"n3", "vipu: busy"}}));
  EXPECT_EQ(s.nodes, (std::set<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(s.later_nodes, (std::set<std::string>{"n3", "n4"}));
  // n4, named by slurmctld, reports its part directly; n5 does not.
  EXPECT_EQ(admission(s, "n4", real), Admission::kApply);
  EXPECT_EQ(admission(s, "n5", EpilogFinished{42, JobResult::kFailed}), Admission::kRefuse);
}

TEST(JobAdmission, HeldEventsAreBounded) {
  JobSummary s = finishedJob();
  const auto bytes = encode({"n3", 1, 1, 1, 1}, PrologStarted{42, 1000, "alice", "n3", 1, 1});
  for (size_t i = 0; i < JobSummary::kMaxHeld; ++i) ASSERT_TRUE(hold(s, "n3", kSec, bytes));
  EXPECT_FALSE(hold(s, "n3", kSec, bytes));
  JobSummary big = finishedJob();
  const std::vector<uint8_t> frame(64 * 1024, 0);
  int held = 0;
  while (hold(big, "n3", kSec, frame)) ++held;
  EXPECT_EQ(held, int(JobSummary::kMaxHeldBytes / frame.size()));
}

// Held events are part of the stored state; a state that holds none is
// written as before (the key is left out), so older shapes read the same.
TEST(JobAdmission, HeldEventsAreStoredWithTheState) {
  JobSummary s = finishedJob();
  EXPECT_EQ(toStateJson(s).find("\"held\""), std::string::npos);
  const auto bytes = encode({"n3", 7, 1, 1, 1}, PrologStarted{42, 1000, "alice", "n3", 1, 1});
  ASSERT_TRUE(hold(s, "n3", 5 * kSec, bytes));
  auto back = fromStateJson(toStateJson(s));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, s);
  ASSERT_EQ(back->held.size(), 1u);
  EXPECT_EQ(back->held[0].envelope, bytes);
  const std::string text = toStateJson(s);
  const std::string head = text.substr(0, text.size() - 1);
  for (const char* bad :
       {R"("held":{})", R"("held":[{"node":"n3","received_ns":1,"envelope":"0g"}])",
        R"("held":[{"node":"n3","received_ns":1,"envelope":"abc"}])",
        R"("held":[{"node":"n3","envelope":"00"}])"})
    EXPECT_FALSE(fromStateJson(head + "," + bad + "}").ok()) << bad;
}

}  // namespace
}  // namespace accel::aggregator

namespace accel::aggregator {
namespace {

// Job 42 ran on n1 alone, its epilog arrived at 50 s.
JobSummary endedAt50() {
  JobSummary s;
  s.job_id = 42;
  mergeEvent(s, "n1", PrologStarted{42, 1000, "alice", "n1", 1}, 10 * kSec);
  mergeEvent(s, "n1", EpilogFinished{42}, 50 * kSec);
  return s;
}

RunAnswer startedAt(int64_t start_s, std::vector<std::string> nodes, uint32_t restarts = 0) {
  JobRun run{restarts, true, std::move(nodes)};
  run.start_time_s = start_s;
  return {42, true, run, 101 * kSec};
}

// The id comes round again (MaxJobId wrapped, slurmctld's state lost): n1's
// prolog of run 0 after its own epilog of run 0 belongs to a new job, which
// slurmctld confirms: it started after the record's last epilog.
TEST(JobAdmission, APrologAfterTheSendersEpilogIsANewJobOnceSlurmctldSaysSo) {
  const JobSummary s = endedAt50();
  const PrologStarted again{42, 2000, "bob", "n1", 1, 0};
  ASSERT_TRUE(s.endedFor("n1", 0));
  EXPECT_EQ(admission(s, "n1", again), Admission::kHold);
  RunAnswer now = startedAt(60, {"n1"});
  Verdict v = admit(s, "n1", again, 100 * kSec, &now);
  EXPECT_EQ(v.admission, Admission::kApply);
  EXPECT_TRUE(v.new_job);
  // The same job's resent epilog, or its next run, are no new job.
  EXPECT_EQ(admission(s, "n1", EpilogFinished{42}), Admission::kApply);
  EXPECT_FALSE(s.endedFor("n1", 1));
  // Its own run still under way on n1: a prolog of it is no new job either.
  JobSummary running;
  running.job_id = 42;
  mergeEvent(running, "n1", PrologStarted{42, 1000, "alice", "n1", 1}, 10 * kSec);
  EXPECT_FALSE(running.endedFor("n1", 0));
}

// A replay of the old job's prolog, by n1's key or another node's, while
// slurmctld still holds the old job: it started before its own epilog.
TEST(JobAdmission, AReplayOfTheOldJobsPrologIsRefused) {
  const JobSummary s = endedAt50();
  RunAnswer old = startedAt(9, {"n1"});
  Verdict v = admit(s, "n1", PrologStarted{42, 1000, "alice", "n1", 1, 0}, 100 * kSec, &old);
  EXPECT_EQ(v.admission, Admission::kRefuse);
  EXPECT_NE(v.why.find("before that record's last epilog"), std::string::npos) << v.why;
  // Started in the very second of the last epilog: not provably later.
  RunAnswer same_second = startedAt(50, {"n1"});
  EXPECT_EQ(
      admit(s, "n1", PrologStarted{42, 1000, "a", "n1", 1, 0}, 100 * kSec, &same_second).admission,
      Admission::kRefuse);
  // A new job elsewhere does not let n2 speak for it.
  RunAnswer elsewhere = startedAt(60, {"n3"});
  v = admit(s, "n2", PrologStarted{42, 1000, "mallory", "n2", 1, 0}, 100 * kSec, &elsewhere);
  EXPECT_EQ(v.admission, Admission::kRefuse);
  EXPECT_NE(v.why.find("n3"), std::string::npos) << v.why;
  // Not known to slurmctld (an answer as new as the claim): refused; pending: too.
  RunAnswer unknown{42, false, {}, 101 * kSec};
  EXPECT_EQ(admission(s, "n1", PrologStarted{42, 1, "a", "n1", 1, 0}, &unknown),
            Admission::kRefuse);
  RunAnswer stale = startedAt(9, {"n1"});
  stale.as_of_ns = 99 * kSec;
  EXPECT_EQ(admission(s, "n1", PrologStarted{42, 1, "a", "n1", 1, 0}, &stale), Admission::kHold)
      << "an answer older than the claim may predate the new job";
}

// Settling: the old record is handed back to be archived, the new job's
// begins afresh with the prolog (owner, nodes) and counts from its arrival.
TEST(JobAdmission, ANewJobArchivesTheOldRecord) {
  JobSummary s = endedAt50();
  s.result = JobResult::kFailed;
  const JobSummary old = s;
  ASSERT_TRUE(hold(s, "n1", 70 * kSec,
                   encode({"n1", 1, 3, 1, 1}, PrologStarted{42, 2000, "bob", "n1", 1, 0})));
  ASSERT_TRUE(
      hold(s, "n1", 71 * kSec, encode({"n1", 1, 4, 1, 1}, EpilogFinished{42, JobResult::kOk, 1})));
  Settled out = settleHeld(s, startedAt(60, {"n1"}));
  ASSERT_TRUE(out.archived);
  EXPECT_EQ(*out.archived, old);
  EXPECT_EQ(out.new_owner, 2000u);
  EXPECT_EQ(out.new_since_ns, 70 * kSec);
  EXPECT_TRUE(out.merged);
  EXPECT_EQ(s.instance, 1u);
  EXPECT_EQ(s.result, JobResult::kOk) << "the old job's failure is not the new job's";
  EXPECT_TRUE(s.held.empty());
  EXPECT_TRUE(s.complete());
  EXPECT_EQ(s.last_epilog_ns, 71 * kSec);
}

}  // namespace
}  // namespace accel::aggregator
