// Idle accelerators in a job's summary: each node's job_idle event, kept per
// node, in the comment as "idle" and, for a job a node cancelled, "ended":
// "idle accelerators" with the result cancelled; a notice alone changes
// neither. Exact comment text, so a change of shape fails here.
#include "accel/aggregator/idle_summary.h"

#include <gtest/gtest.h>

#include "accel/aggregator/summary.h"

namespace accel::aggregator {
namespace {

using namespace accel::event;

JobSummary twoNodeJob() {
  JobSummary s;
  s.job_id = 42;
  mergeEvent(s, "g1", PrologStarted{42, 1000, "alice", "g[1-2]", 2, 0});
  mergeEvent(s, "g1", PrologFinished{.job_id = 42, .devices = {"gpu0"}, .accel_kind = "gpu"});
  mergeEvent(s, "g2", PrologFinished{.job_id = 42, .devices = {"gpu1"}, .accel_kind = "gpu"});
  mergeEvent(s, "g1", EpilogFinished{42});
  mergeEvent(s, "g2", EpilogFinished{42});
  return s;
}

TEST(IdleSummary, ANoticeIsKeptPerNodeAndWrittenWithoutEndingTheJob) {
  JobSummary s = twoNodeJob();
  EXPECT_TRUE(mergeEvent(s, "g2", JobIdle{42, 1805, {1}, IdleAction::kNotify, true}));
  EXPECT_FALSE(mergeEvent(s, "g2", JobIdle{42, 1805, {1}, IdleAction::kNotify, true}))
      << "a resend changes nothing";
  EXPECT_EQ(toCommentJson(s),
            R"({"v":1,"result":"ok","accel":"gpu","count":2,"partition":"","nodes":["g1","g2"],)"
            R"("appliance_s":0,"appliance_limit_s":0,"surrogate_steps":0,)"
            R"("idle":{"g2":{"idle_s":1805,"gpus":[1],"action":"notify"}}})");
}

TEST(IdleSummary, ACancelEndsTheJobCancelledForIdleAccelerators) {
  JobSummary s = twoNodeJob();
  mergeEvent(s, "g1", JobIdle{42, 3, {0}, IdleAction::kCancel, true});
  mergeEvent(s, "g2", JobIdle{42, 3, {1}, IdleAction::kCancelFailed, false});
  auto j = nlohmann::json::parse(toCommentJson(s));
  EXPECT_EQ(j["result"], "cancelled");
  EXPECT_EQ(j["ended"], "idle accelerators");
  EXPECT_EQ(j["idle"]["g1"]["action"], "cancel");
  EXPECT_EQ(j["idle"]["g2"]["action"], "cancel_failed");
  // The state keeps it all, and reads back equal.
  auto back = fromStateJson(toStateJson(s));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, s);
  EXPECT_EQ(back->idle.at("g2"), (JobIdle{0, 3, {1}, IdleAction::kCancelFailed, false}));
}

TEST(IdleSummary, OnlyAFailedCancelDoesNotSayEnded) {
  JobSummary s = twoNodeJob();
  mergeEvent(s, "g1", JobIdle{42, 3, {0}, IdleAction::kCancelFailed, true});
  auto j = nlohmann::json::parse(toCommentJson(s));
  EXPECT_EQ(j["result"], "ok");
  EXPECT_EQ(j.count("ended"), 0u);
}

TEST(IdleSummary, AStateOfTheWrongShapeIsRefused) {
  JobSummary s = twoNodeJob();
  mergeEvent(s, "g1", JobIdle{42, 3, {0}, IdleAction::kNone, false});
  std::string text = toStateJson(s);
  auto at = text.find(R"("action":0)");
  ASSERT_NE(at, std::string::npos) << text;
  std::string bad = text;
  bad.replace(at, 10, R"("action":9)");
  EXPECT_FALSE(fromStateJson(bad).ok()) << "an action this version does not know";
  bad = text;
  bad.replace(at, 10, R"("action":"x")");
  EXPECT_FALSE(fromStateJson(bad).ok());
}

}  // namespace
}  // namespace accel::aggregator
