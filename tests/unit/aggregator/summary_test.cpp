// Merging a job's events from several nodes into one summary.
#include "accel/aggregator/summary.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "accel/events/codec.h"

namespace accel::aggregator {
namespace {

using namespace accel::event;

JobSummary twoNodeJob() {
  JobSummary s;
  s.job_id = 42;
  mergeEvent(s, "n1", PrologStarted{42, 1000, "alice", "n[1-2]", 2});
  mergeEvent(s, "n2", PrologStarted{42, 1000, "alice", "n[1-2]", 2});
  // Both nodes report the one partition of two IPUs, as the agent names them.
  mergeEvent(s, "n1",
             PrologFinished{42, JobResult::kOk, {"p42:0", "p42:1"}, "p42", 1, "", "ipu", 3600});
  mergeEvent(s, "n2",
             PrologFinished{42, JobResult::kOk, {"p42:0", "p42:1"}, "p42", 1, "", "ipu", 3600});
  mergeEvent(s, "n1", StepStarted{42, 3, "wsjob-1-csx1", true});
  mergeEvent(s, "n1", StepStarted{42, 4, "train", false});
  mergeEvent(s, "n1", StepStarted{42, 3, "wsjob-1-csx1", true});  // replayed: counted once
  mergeEvent(s, "n1", ApplianceJobChanged{42, "wsjob-1", ApplianceState::kRunning, 1, 50});
  return s;
}

// A 2-IPU job on two nodes has 2 IPUs, not one pair per node.
TEST(Summary, MergesNodesDevicesAndSteps) {
  JobSummary s = twoNodeJob();
  EXPECT_EQ(s.accel_kind, "ipu");
  EXPECT_EQ(s.accel_count, 2u);
  EXPECT_EQ(s.partition, "p42");
  EXPECT_EQ(s.nodes, (std::set<std::string>{"n1", "n2"}));
  EXPECT_EQ(s.surrogate_steps.size(), 1u);
  EXPECT_EQ(s.applianceSeconds(), 50u);
  EXPECT_EQ(s.appliance_limit_s, 3600u);
}

TEST(Summary, CompleteOnlyWhenEveryEpilogIsIn) {
  JobSummary s = twoNodeJob();
  EXPECT_FALSE(s.complete());
  mergeEvent(s, "n1", EpilogFinished{42, JobResult::kOk, 1, "", true, 70});
  EXPECT_FALSE(s.complete());
  mergeEvent(s, "n1", EpilogFinished{42, JobResult::kOk, 1, "", true, 70});  // same node again
  EXPECT_FALSE(s.complete());
  mergeEvent(s, "n2", EpilogFinished{42, JobResult::kOk, 1, "", false, 0});
  EXPECT_TRUE(s.complete());
  EXPECT_EQ(s.applianceSeconds(), 70u);
  EXPECT_EQ(s.cleanup_failed, (std::set<std::string>{"n2"}));
}

TEST(Summary, UnknownNodeCountCompletesAtFirstEpilog) {
  JobSummary s;
  s.job_id = 7;
  mergeEvent(s, "n1", EpilogFinished{7});
  EXPECT_TRUE(s.complete());
}

TEST(Summary, WorstResultWinsWhateverTheOrder) {
  JobSummary a, b;
  mergeEvent(a, "n1", TimeLimitEnforced{1, 60, 61});
  mergeEvent(a, "n2", EpilogFinished{1, JobResult::kOk});
  mergeEvent(b, "n2", EpilogFinished{1, JobResult::kOk});
  mergeEvent(b, "n1", TimeLimitEnforced{1, 60, 61});
  EXPECT_EQ(a.result, JobResult::kTimeLimit);
  EXPECT_EQ(a.result, b.result);
  mergeEvent(a, "n2", PrologFinished{1, JobResult::kFailed});
  EXPECT_EQ(a.result, JobResult::kFailed);
}

TEST(Summary, MixedKindsSayMixed) {
  JobSummary s;
  mergeEvent(s, "n1", PrologFinished{1, JobResult::kOk, {"cuda0"}, "", 0, "", "gpu"});
  mergeEvent(s, "n2", PrologFinished{1, JobResult::kOk, {"ipu0"}, "", 0, "", "ipu"});
  EXPECT_EQ(s.accel_kind, "mixed");
}

TEST(Summary, StateRoundTripsAndBadStateIsRefused) {
  JobSummary s = twoNodeJob();
  auto back = fromStateJson(toStateJson(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
  EXPECT_FALSE(fromStateJson("{\"job_id\":1}").ok());
  EXPECT_FALSE(fromStateJson("garbage").ok());
}

// Found by fuzz_event_ingest: names are bytes from the wire, not always UTF-8.
TEST(Summary, InvalidUtf8NamesAreStoredNotThrown) {
  JobSummary s;
  mergeEvent(s,
             "n\xff"
             "1",
             PrologFinished{1, JobResult::kOk, {"d"}, "p\xc3", 0, "", "gpu"});
  auto back = fromStateJson(toStateJson(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->accel_count, 1u);
  EXPECT_EQ(toCommentJson(s).find('\xff'), std::string::npos);
}

TEST(Summary, CommentJsonIsVersionedAndSafeForSacctP) {
  JobSummary s = twoNodeJob();
  s.partition = "a|b";
  std::string json = toCommentJson(s);
  EXPECT_EQ(json.find('|'), std::string::npos);
  EXPECT_EQ(json.find('\n'), std::string::npos);
  auto j = nlohmann::json::parse(json);
  EXPECT_EQ(j["v"], 1);
  EXPECT_EQ(j["result"], "ok");
  EXPECT_EQ(j["partition"], "a|b");
  EXPECT_EQ(j["count"], 2);
  EXPECT_EQ(j["surrogate_steps"], 1);
  EXPECT_EQ(j["nodes"], nlohmann::json::array({"n1", "n2"}));
}

// A limit a node could not measure is named in the comment, by node, and
// kept in the stored state; a job whose nodes all measured has no such key.
TEST(Summary, ALimitANodeCouldNotMeasureIsNamed) {
  JobSummary s;
  s.job_id = 7;
  mergeEvent(s, "c1", PrologFinished{7, JobResult::kOk, {}, "", 1, "", "appliance", 60, false});
  EXPECT_EQ(nlohmann::json::parse(toCommentJson(s)).count("limit_unmeasured"), 0u);
  mergeEvent(s, "c2", PrologFinished{7, JobResult::kOk, {}, "", 1, "", "appliance", 60, true});
  auto j = nlohmann::json::parse(toCommentJson(s));
  EXPECT_EQ(j["limit_unmeasured"], nlohmann::json::array({"c2"}));
  auto back = fromStateJson(toStateJson(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->limit_unmeasured, (std::set<std::string>{"c2"}));
}

// A job that checkpointed and requeued itself: each run has its own budget,
// and the summary counts the runs and each run's appliance seconds; the job
// used their sum. A resent event of an earlier run changes nothing.
TEST(Summary, ARequeuedJobCountsItsRunsAndTheSecondsOfEach) {
  JobSummary s;
  s.job_id = 8;
  mergeEvent(s, "n1", PrologStarted{8, 1000, "alice", "n1", 1, 0});
  mergeEvent(s, "n1", ApplianceJobChanged{8, "wsjob-1", ApplianceState::kRunning, 1, 3});
  mergeEvent(s, "n1", EpilogFinished{8, JobResult::kOk, 1, "", true, 6, 0});
  EXPECT_EQ(s.restarts, 0u);
  EXPECT_EQ(nlohmann::json::parse(toCommentJson(s)).count("restarts"), 0u) << "one run: no key";
  EXPECT_TRUE(mergeEvent(s, "n1", PrologStarted{8, 1000, "alice", "n1", 1, 1}))
      << "a new run changes the summary";
  mergeEvent(s, "n1", ApplianceJobChanged{8, "wsjob-2", ApplianceState::kRunning, 1, 2});
  EXPECT_EQ(s.runSeconds(), (std::vector<uint64_t>{6, 2}))
      << "the second run's updates are its own";
  mergeEvent(s, "n1", EpilogFinished{8, JobResult::kOk, 1, "", true, 4, 1});
  mergeEvent(s, "n1", EpilogFinished{8, JobResult::kOk, 1, "", true, 6, 0});  // resent
  EXPECT_EQ(s.restarts, 1u);
  EXPECT_EQ(s.runSeconds(), (std::vector<uint64_t>{6, 4}));
  EXPECT_EQ(s.applianceSeconds(), 10u);
  auto j = nlohmann::json::parse(toCommentJson(s));
  EXPECT_EQ(j["restarts"], 1);
  EXPECT_EQ(j["run_appliance_s"], nlohmann::json::array({6, 4}));
  EXPECT_EQ(j["appliance_s"], 10);
  auto back = fromStateJson(toStateJson(s));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, s);
  // A run number from a broken or hostile sender is bounded.
  mergeEvent(s, "n1", PrologStarted{8, 1000, "alice", "n1", 1, 4'000'000'000u});
  EXPECT_EQ(s.restarts, JobSummary::kMaxRun);
  EXPECT_EQ(s.runSeconds().size(), JobSummary::kMaxRun + 1);
}

constexpr int64_t kSec = 1'000'000'000;

JobSummary gpuJob(const std::string& list, uint32_t count) {
  JobSummary s;
  s.job_id = 9;
  mergeEvent(s, "g1", PrologStarted{9, 1000, "bob", list, count});
  return s;
}

// Requeued onto another node, a GPU job had its first node's GPUs and then
// the second's, never both: the count is its latest run's.
TEST(Summary, ARequeuedGpuJobCountsTheDevicesOfItsLatestRun) {
  JobSummary s;
  s.job_id = 9;
  mergeEvent(s, "g1", PrologStarted{9, 1000, "bob", "g1", 1, 0});
  mergeEvent(s, "g1", PrologFinished{9, JobResult::kOk, {"0", "1"}, "", 1, "", "gpu"});
  mergeEvent(s, "g1", EpilogFinished{9});
  EXPECT_EQ(s.accel_count, 2u);
  mergeEvent(s, "g2", PrologStarted{9, 1000, "bob", "g2", 1, 1});
  mergeEvent(s, "g2", PrologFinished{9, JobResult::kOk, {"0", "1", "2"}, "", 1, "", "gpu"});
  mergeEvent(s, "g2", EpilogFinished{9, JobResult::kOk, 1, "", true, 0, 1});
  EXPECT_EQ(s.accel_count, 3u);
  mergeEvent(s, "g1",
             PrologFinished{9, JobResult::kOk, {"0", "1"}, "", 1, "", "gpu"});  // resent, first run
  EXPECT_EQ(s.accel_count, 3u);
  auto j = nlohmann::json::parse(toCommentJson(s));
  EXPECT_EQ(j["count"], 3);
  EXPECT_EQ(j["nodes"], nlohmann::json::array({"g1", "g2"}));
  auto back = fromStateJson(toStateJson(s));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->accel_count, 3u);
}

TEST(Summary, GpusAreEachNodesOwnAndAddUp) {
  JobSummary s = gpuJob("g[1-2]", 2);
  mergeEvent(s, "g1", PrologFinished{9, JobResult::kOk, {"0", "1"}, "", 1, "", "gpu"});
  mergeEvent(s, "g2", PrologFinished{9, JobResult::kOk, {"0", "1"}, "", 1, "", "gpu"});
  EXPECT_EQ(s.accel_count, 4u);
  EXPECT_EQ(nlohmann::json::parse(toCommentJson(s))["count"], 4);
}

// An agent that restarts sends its prolog result again under a new epoch,
// which dedupe cannot catch: the second copy must count for nothing.
TEST(Summary, RepeatedPrologResultOfANodeCountsOnce) {
  JobSummary gpus = gpuJob("g[1-2]", 2);
  JobSummary ipus = gpuJob("g[1-2]", 2);
  for (int i = 0; i < 2; ++i) {
    mergeEvent(gpus, "g1", PrologFinished{9, JobResult::kOk, {"0", "1"}, "", 1, "", "gpu"});
    mergeEvent(ipus, "g1", PrologFinished{9, JobResult::kOk, {"p9:0", "p9:1"}, "p9", 1, "", "ipu"});
  }
  mergeEvent(gpus, "g2", PrologFinished{9, JobResult::kOk, {"0", "1"}, "", 1, "", "gpu"});
  EXPECT_EQ(gpus.accel_count, 4u);
  EXPECT_EQ(ipus.accel_count, 2u);
}

// IPUs of the partition count once; a device of the node's own beside them
// counts for that node.
TEST(Summary, PartitionAndLocalDevicesOfOneNodeAreTold) {
  JobSummary s;
  mergeEvent(s, "n1", PrologFinished{1, JobResult::kOk, {"0", "p1:0", "p1:1"}, "p1", 0, "", "ipu"});
  mergeEvent(s, "n2", PrologFinished{1, JobResult::kOk, {"p1:0", "p1:1"}, "p1", 0, "", "ipu"});
  EXPECT_EQ(s.accel_count, 3u);
}

// Every node reads the job's one appliance: the figure is the largest, not a sum.
TEST(Summary, ApplianceSecondsAreTheLargestNodesFigure) {
  JobSummary s = gpuJob("g[1-2]", 2);
  mergeEvent(s, "g1", EpilogFinished{9, JobResult::kOk, 1, "", true, 30});
  mergeEvent(s, "g2", EpilogFinished{9, JobResult::kOk, 1, "", true, 31});
  EXPECT_EQ(s.applianceSeconds(), 31u);
  EXPECT_EQ(nlohmann::json::parse(toCommentJson(s))["appliance_s"], 31);
}

TEST(Summary, ListedNodesAreTheOnesWaitedFor) {
  JobSummary s = gpuJob("g[1-2]", 2);
  mergeEvent(s, "g1", EpilogFinished{9});
  mergeEvent(s, "x7", EpilogFinished{9});  // not the job's node: does not stand in for g2
  EXPECT_FALSE(s.complete());
  EXPECT_EQ(s.missingNodes(), (std::set<std::string>{"g2"}));
  mergeEvent(s, "g2", EpilogFinished{9});
  EXPECT_TRUE(s.complete());
  EXPECT_TRUE(s.missingNodes().empty());
}

TEST(Summary, CommentIsDueAtTheLastEpilogOrAfterTheWait) {
  JobSummary s = gpuJob("g[1-2]", 2);
  EXPECT_EQ(commentDueNs(s, 300 * kSec), std::nullopt);
  mergeEvent(s, "g1", EpilogFinished{9}, 1000 * kSec);
  mergeEvent(s, "g1", EpilogFinished{9},
             1100 * kSec);  // again, later: the wait runs from the first
  EXPECT_EQ(commentDueNs(s, 300 * kSec), 1300 * kSec);
  mergeEvent(s, "g2", EpilogFinished{9}, 1200 * kSec);
  EXPECT_EQ(commentDueNs(s, 300 * kSec), 0);
}

TEST(Summary, UnknownNodeCountIsDueAtTheFirstEpilog) {
  JobSummary s;
  mergeEvent(s, "n1", PrologStarted{7, 0, "a", "n[1-2]", 0});  // an older agent: no count
  mergeEvent(s, "n1", EpilogFinished{7}, 1000 * kSec);
  EXPECT_TRUE(s.listed_nodes.empty());
  EXPECT_EQ(commentDueNs(s, 300 * kSec), 0);
  EXPECT_EQ(nlohmann::json::parse(toCommentJson(s)).count("missing_nodes"), 0u);
}

// After the wait: the nodes of the list that never answered are named, also
// one that never reported anything at all.
TEST(Summary, SummaryAfterTheWaitNamesTheMissingNodes) {
  JobSummary s = gpuJob("g[1-3]", 3);
  mergeEvent(s, "g2", PrologFinished{9, JobResult::kOk, {"0"}, "", 1, "", "gpu"});
  mergeEvent(s, "g1", EpilogFinished{9}, 1000 * kSec);
  auto j = nlohmann::json::parse(toCommentJson(s));
  EXPECT_EQ(j["nodes"], nlohmann::json::array({"g1", "g2", "g3"}));
  EXPECT_EQ(j["missing_nodes"], nlohmann::json::array({"g2", "g3"}));
}

// A list that cannot be read, that names too many nodes or that disagrees
// with the count is set aside: the count alone decides, and what is missing
// is named as far as the nodes that reported allow.
TEST(Summary, UnusableNodeListFallsBackToTheCount) {
  for (const std::string& list : std::vector<std::string>{
           "g[1-", "g[2-1]", "g[1-2]]", "g[1-3]", "g1,g1", "g[0-99999]", std::string(70000, ',')}) {
    SCOPED_TRACE(list.substr(0, 20));
    JobSummary s = gpuJob(list, 2);
    EXPECT_TRUE(s.listed_nodes.empty());
    EXPECT_EQ(s.node_count, 2u);
    mergeEvent(s, "g1", EpilogFinished{9}, 1000 * kSec);
    EXPECT_FALSE(s.complete());
    EXPECT_EQ(s.missingNodes(), std::set<std::string>{}) << "g1, the only reporter, is in";
    mergeEvent(s, "g2", PrologFinished{9, JobResult::kOk, {"0"}, "", 1, "", "gpu"});
    EXPECT_EQ(s.missingNodes(), (std::set<std::string>{"g2"}));
    EXPECT_EQ(commentDueNs(s, 300 * kSec), 1300 * kSec);
    mergeEvent(s, "g2", EpilogFinished{9}, 1001 * kSec);
    EXPECT_TRUE(s.complete());
    auto back = fromStateJson(toStateJson(s));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s);
  }
}

// The comment of the two-node IPU job in docs/accounting-format.md, byte for byte.
TEST(Summary, TwoNodeCommentIsExactlyAsDocumented) {
  JobSummary s;
  s.job_id = 4242;
  for (std::string node : {"ipu-host1", "ipu-host2"}) {
    mergeEvent(s, node, PrologStarted{4242, 1000, "alice", "ipu-host[1-2]", 2});
    mergeEvent(s, node,
               PrologFinished{4242,
                              JobResult::kOk,
                              {"p4242:0", "p4242:1", "p4242:2", "p4242:3"},
                              "p4242",
                              1,
                              "",
                              "ipu",
                              0});
  }
  mergeEvent(s, "ipu-host1", EpilogFinished{4242, JobResult::kOk, 1, "", true, 0}, 1000 * kSec);
  EXPECT_EQ(
      toCommentJson(s),
      R"({"v":1,"result":"ok","accel":"ipu","count":4,"partition":"p4242","nodes":["ipu-host1","ipu-host2"],)"
      R"("appliance_s":0,"appliance_limit_s":0,"surrogate_steps":0,"missing_nodes":["ipu-host2"]})");
  mergeEvent(s, "ipu-host2", EpilogFinished{4242, JobResult::kOk, 1, "", true, 0}, 1001 * kSec);
  EXPECT_EQ(
      toCommentJson(s),
      R"({"v":1,"result":"ok","accel":"ipu","count":4,"partition":"p4242","nodes":["ipu-host1","ipu-host2"],)"
      R"("appliance_s":0,"appliance_limit_s":0,"surrogate_steps":0})");
}

TEST(Summary, StateRoundTripsTheWaitAndPerNodeFigures) {
  JobSummary s = twoNodeJob();
  mergeEvent(s, "n1", EpilogFinished{42, JobResult::kOk, 1, "", true, 70}, 1234 * kSec);
  mergeEvent(s, "g9", PrologFinished{42, JobResult::kOk, {"0", "1"}, "", 1, "", "gpu"});
  auto back = fromStateJson(toStateJson(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
  EXPECT_EQ(back->first_epilog_ns, 1234 * kSec);
  EXPECT_EQ(back->node_list, "n[1-2]");
  EXPECT_EQ(back->listed_nodes, (std::set<std::string>{"n1", "n2"}));
  EXPECT_EQ(back->partition_devices, (std::set<std::string>{"p42:0", "p42:1"}));
  EXPECT_EQ(back->local_devices, (std::map<std::string, uint32_t>{{"g9", 2}}));
  EXPECT_EQ(back->accel_count, 4u);
}

// Why each node's prolog failed, in the comment under "errors" (absent when
// none did): the message each node sent last, at most 200 bytes, cut between
// characters, never inside one.
TEST(Summary, FailedPrologsAreNamedPerNode) {
  JobSummary s = gpuJob("g[1-3]", 3);
  mergeEvent(s, "g1", PrologFinished{9, JobResult::kOk, {"0"}, "", 1, "", "gpu"});
  EXPECT_TRUE(s.errors.empty());
  EXPECT_EQ(nlohmann::json::parse(toCommentJson(s)).count("errors"), 0u);
  mergeEvent(s, "g3", PrologFinished{9, JobResult::kFailed, {}, "", 1, "no V-IPU controller here"});
  mergeEvent(
      s, "g2",
      PrologFinished{9, JobResult::kFailed, {}, "", 1, ""});  // no reason given: nothing to show
  EXPECT_EQ(s.errors, (std::map<std::string, std::string>{{"g3", "no V-IPU controller here"}}));
  auto j = nlohmann::json::parse(toCommentJson(s));
  EXPECT_EQ(j["result"], "failed");
  EXPECT_EQ(j["errors"], nlohmann::json({{"g3", "no V-IPU controller here"}}));

  std::string long_text;
  while (long_text.size() < 300)
    long_text += "|é";  // one byte, then two: byte 197 is inside a character
  mergeEvent(s, "g3", PrologFinished{9, JobResult::kFailed, {}, "", 1, long_text});
  const std::string& kept = s.errors.at("g3");
  EXPECT_LE(kept.size(), JobSummary::kMaxErrorBytes);
  EXPECT_GE(kept.size(), JobSummary::kMaxErrorBytes - 2);
  EXPECT_TRUE(kept.ends_with("...")) << kept;
  EXPECT_EQ(long_text.substr(0, kept.size() - 3), kept.substr(0, kept.size() - 3));
  std::string comment = toCommentJson(s);
  EXPECT_EQ(comment.find('|'), std::string::npos);
  EXPECT_EQ(comment.find("\xef\xbf\xbd"), std::string::npos) << "a character was cut: " << comment;
  EXPECT_EQ(nlohmann::json::parse(comment)["errors"]["g3"], kept);

  auto back = fromStateJson(toStateJson(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
}

// A job whose prolog fails on many nodes names at most 16 of them: the first
// by name, whatever order their events came in.
TEST(Summary, ErrorsAreBoundedToTheFirstNodesByName) {
  JobSummary up, down;
  for (int i = 0; i < 40; ++i) {
    mergeEvent(up, "n" + std::to_string(100 + i),
               PrologFinished{5, JobResult::kFailed, {}, "", 1, "broken"});
    mergeEvent(down, "n" + std::to_string(139 - i),
               PrologFinished{5, JobResult::kFailed, {}, "", 1, "broken"});
  }
  EXPECT_EQ(up.errors.size(), JobSummary::kMaxErrorNodes);
  EXPECT_EQ(up.errors, down.errors);
  EXPECT_EQ(up.errors.begin()->first, "n100");
  EXPECT_EQ(up.errors.rbegin()->first, "n115");
}

// The comment of the wrong-kind job in docs/accounting-format.md, byte for byte.
TEST(Summary, WrongKindCommentIsExactlyAsDocumented) {
  JobSummary s;
  s.job_id = 4243;
  mergeEvent(s, "gpu-host3", PrologStarted{4243, 1000, "alice", "gpu-host3", 1});
  mergeEvent(s, "gpu-host3",
             PrologFinished{
                 4243,
                 JobResult::kFailed,
                 {},
                 "",
                 1,
                 "this node (gpu-host3) has no V-IPU controller (no vipu.conf beside "
                 "/etc/slurm/accel.conf) "
                 "and no IPUs of its own, yet the job asked for 2 IPUs: a fault of the cluster's "
                 "configuration, not of the job"});
  mergeEvent(s, "gpu-host3", EpilogFinished{4243, JobResult::kOk, 1, "", true, 0}, 1000 * kSec);
  EXPECT_EQ(
      toCommentJson(s),
      R"({"v":1,"result":"failed","accel":"","count":0,"partition":"","nodes":["gpu-host3"],"appliance_s":0,)"
      R"("appliance_limit_s":0,"surrogate_steps":0,"errors":{"gpu-host3":"this node (gpu-host3) has no V-IPU )"
      R"(controller (no vipu.conf beside /etc/slurm/accel.conf) and no IPUs of its own, yet the job asked for 2 )"
      R"(IPUs: a fault of the cluster's configuration, not of the job"}})");
}

}  // namespace
}  // namespace accel::aggregator
