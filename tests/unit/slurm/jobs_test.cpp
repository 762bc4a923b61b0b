// The libslurm adapter of the agent (slurm/jobs): the decisions it takes on
// what slurmctld reports, without a slurmctld. Reads Slurm's job-state
// constants, so this folder is the one unit test folder that includes Slurm's
// headers (through slurm_compat.h).
#include "accel/slurm/jobs.h"

#include <gtest/gtest.h>

#include "accel/slurm/slurm_compat.h"

namespace accel::slurm {
namespace {

using agentd::JobPresence;

TEST(JobPresence, OnlyAnEndedJobThatIsNotCompletingIsGone) {
  EXPECT_EQ(presenceFromState(JOB_RUNNING), JobPresence::kAlive);
  EXPECT_EQ(presenceFromState(JOB_RUNNING | JOB_CONFIGURING), JobPresence::kAlive);
  EXPECT_EQ(presenceFromState(JOB_SUSPENDED), JobPresence::kAlive);
  // Completing: slurmd has yet to run the epilogs, ours among them.
  EXPECT_EQ(presenceFromState(JOB_COMPLETE | JOB_COMPLETING), JobPresence::kAlive);
  EXPECT_EQ(presenceFromState(JOB_CANCELLED | JOB_COMPLETING), JobPresence::kAlive);
  EXPECT_EQ(presenceFromState(JOB_COMPLETE), JobPresence::kGone);
  EXPECT_EQ(presenceFromState(JOB_CANCELLED), JobPresence::kGone);
  EXPECT_EQ(presenceFromState(JOB_FAILED), JobPresence::kGone);
  EXPECT_EQ(presenceFromState(JOB_TIMEOUT), JobPresence::kGone);
  EXPECT_EQ(presenceFromState(JOB_NODE_FAIL), JobPresence::kGone);
  EXPECT_EQ(presenceFromState(JOB_PENDING), JobPresence::kGone);  // requeued
}

}  // namespace
}  // namespace accel::slurm
