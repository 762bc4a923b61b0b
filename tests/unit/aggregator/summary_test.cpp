// Merging a job's events from several nodes into one summary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "accel/aggregator/summary.h"

namespace accel::aggregator {
namespace {

using namespace accel::event;

JobSummary twoNodeJob() {
  JobSummary s;
  s.job_id = 42;
  mergeEvent(s, "n1", PrologStarted{42, 1000, "alice", "n[1-2]", 2});
  mergeEvent(s, "n1", PrologFinished{42, JobResult::kOk, {"ipu0", "ipu1"}, "p42", 1, "", "ipu", 3600});
  mergeEvent(s, "n2", PrologFinished{42, JobResult::kOk, {"ipu0", "ipu1"}, "p42", 1, "", "ipu", 3600});
  mergeEvent(s, "n1", StepStarted{42, 3, "wsjob-1-csx1", true});
  mergeEvent(s, "n1", StepStarted{42, 4, "train", false});
  mergeEvent(s, "n1", StepStarted{42, 3, "wsjob-1-csx1", true});  // replayed: counted once
  mergeEvent(s, "n1", ApplianceJobChanged{42, "wsjob-1", ApplianceState::kRunning, 1, 50});
  return s;
}

TEST(Summary, MergesNodesDevicesAndSteps) {
  JobSummary s = twoNodeJob();
  EXPECT_EQ(s.accel_kind, "ipu");
  EXPECT_EQ(s.accel_count, 4u);
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
  mergeEvent(s, "n\xff" "1", PrologFinished{1, JobResult::kOk, {"d"}, "p\xc3", 0, "", "gpu"});
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
  EXPECT_EQ(j["count"], 4);
  EXPECT_EQ(j["surrogate_steps"], 1);
  EXPECT_EQ(j["nodes"], nlohmann::json::array({"n1", "n2"}));
}

}  // namespace
}  // namespace accel::aggregator
