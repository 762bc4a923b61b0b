#include "accel/agent/lifecycle.h"

#include <gtest/gtest.h>

namespace accel::agent {
namespace {

TEST(LifecycleTest, HappyPath) {
  auto s = transition(JobPhase::kNone, JobEvent::kPrologBegin);
  ASSERT_EQ(s, JobPhase::kProlog);
  s = transition(*s, JobEvent::kPrologOk);
  ASSERT_EQ(s, JobPhase::kReady);
  s = transition(*s, JobEvent::kEpilogBegin);
  ASSERT_EQ(s, JobPhase::kEpilog);
  EXPECT_EQ(transition(*s, JobEvent::kEpilogOk), JobPhase::kCleaned);
}

TEST(LifecycleTest, RetriesAndIdempotentEpilog) {
  EXPECT_EQ(transition(JobPhase::kProlog, JobEvent::kPrologBegin), JobPhase::kProlog);
  EXPECT_EQ(transition(JobPhase::kFailed, JobEvent::kPrologBegin), JobPhase::kProlog);
  EXPECT_EQ(transition(JobPhase::kNone, JobEvent::kEpilogBegin), JobPhase::kEpilog);
  EXPECT_EQ(transition(JobPhase::kCleaned, JobEvent::kEpilogBegin), JobPhase::kEpilog);
  EXPECT_EQ(transition(JobPhase::kEpilog, JobEvent::kEpilogFail), JobPhase::kFailed);
  EXPECT_EQ(transition(JobPhase::kFailed, JobEvent::kEpilogBegin), JobPhase::kEpilog);
}

TEST(LifecycleTest, EdgesNotInTheTableAreRefused) {
  EXPECT_FALSE(transition(JobPhase::kNone, JobEvent::kPrologOk));
  EXPECT_FALSE(transition(JobPhase::kReady, JobEvent::kPrologBegin));
  EXPECT_FALSE(transition(JobPhase::kReady, JobEvent::kPrologFail));
  EXPECT_FALSE(transition(JobPhase::kCleaned, JobEvent::kEpilogOk));
  EXPECT_FALSE(transition(JobPhase::kReady, JobEvent::kEpilogOk));
  EXPECT_FALSE(transition(JobPhase::kEpilog, JobEvent::kPrologOk));
}

TEST(LifecycleTest, NamesRoundTrip) {
  for (auto p : {JobPhase::kNone, JobPhase::kProlog, JobPhase::kReady, JobPhase::kEpilog,
                 JobPhase::kCleaned, JobPhase::kFailed})
    EXPECT_EQ(parsePhase(phaseName(p)), p);
  EXPECT_FALSE(parsePhase("running"));
  EXPECT_TRUE(holdsResources(JobPhase::kReady));
  EXPECT_FALSE(holdsResources(JobPhase::kCleaned));
}

}  // namespace
}  // namespace accel::agent
