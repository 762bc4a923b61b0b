// The views of `accelctl jobs` and `accelctl job ID` on literal replies: what
// the daemon sends for a job on an appliance head node, durations, and values
// this accelctl does not know.
#include "accel/ctl/job_view.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "accel/schemas/control_generated.h"

namespace accel::ctl {
namespace {

namespace fb = accel::control;

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kNow = 1'800'000'000 * kSec;  // 2027-01-15T08:00:00 UTC

// A JobInfo as the daemon sends it for a job on an appliance head node.
std::vector<uint8_t> applianceJob(const char* state, uint32_t systems, double seconds) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::ApplianceJobInfo>> jobs{
      fb::CreateApplianceJobInfoDirect(fbb, "wsjob-compile", "succeeded", 0, kNow - 900 * kSec,
                                       kNow - 890 * kSec, kNow - 800 * kSec),
      fb::CreateApplianceJobInfoDirect(fbb, "wsjob-train", state, systems, kNow - 790 * kSec,
                                       kNow - 780 * kSec, 0)};
  std::vector<flatbuffers::Offset<fb::EnvVar>> env{
      fb::CreateEnvVarDirect(fbb, "ACCEL_JOB_DIR", "/run/accel-agent/jobs/65"),
      fb::CreateEnvVarDirect(fbb, "ACCEL_APPLIANCE_TIME_LIMIT", "3600")};
  std::vector<flatbuffers::Offset<fb::Device>> devices;
  fbb.Finish(fb::CreateJobInfoDirect(fbb, 65, 1001, "bob", fb::JobState::Ready, &devices,
                                     "/run/accel-agent/jobs/65", &env, kNow - 1000 * kSec,
                                     kNow - 999 * kSec, "", &jobs, seconds));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

TEST(JobViewLiteralTest, AnApplianceJobHoldsTheSystemsOfItsRunningJobs) {
  setenv("TZ", "UTC", 1);
  auto buf = applianceJob("running", 2, 754.6);
  const auto& j = *flatbuffers::GetRoot<fb::JobInfo>(buf.data());
  EXPECT_EQ(jobDevices(j), "2 CS-X");
  EXPECT_EQ(jobsTable({&j}),
            "JOBID      USER         STATE    READY                DEVICES\n"
            "65         bob          Ready    2027-01-15T07:43:21  2 CS-X\n");
  const std::string t = jobText(j);
  EXPECT_NE(t.find("devices     2 CS-X\n"
                   "directory   /run/accel-agent/jobs/65\n"
                   "appliance   wsjob-compile: succeeded, no CS-X (compile), created "
                   "2027-01-15T07:45:00, started 2027-01-15T07:45:10, ended 2027-01-15T07:46:40\n"
                   "appliance   wsjob-train: running, 2 CS-X, created 2027-01-15T07:46:50, started "
                   "2027-01-15T07:47:00\n"
                   "appliance   00:12:34 used of its limit of 01:00:00\n"),
            std::string::npos)
      << t;
  // Once its appliance jobs are over, the job holds no system any more.
  buf = applianceJob("succeeded", 2, 754.6);
  EXPECT_EQ(jobDevices(*flatbuffers::GetRoot<fb::JobInfo>(buf.data())), "none");
}

// A JobInfo of an IPU job as a daemon sends it: with the partition and its
// IPUs, or (a daemon from before those fields) only the tasks' variables.
std::vector<uint8_t> ipuJob(const char* partition, uint32_t ipus) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::EnvVar>> env{
      fb::CreateEnvVarDirect(fbb, "IPUOF_VIPU_API_PARTITION_ID", "p9")};
  fbb.Finish(fb::CreateJobInfoDirect(fbb, 9, 1001, "bob", fb::JobState::Ready, nullptr, "", &env, 0,
                                     0, "", nullptr, 0, nullptr, partition, ipus));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

TEST(JobViewLiteralTest, APartitionsIpusAreNamedAsTheJobsEventsNameThem) {
  auto one = ipuJob("p9", 1), four = ipuJob("p9", 4), many = ipuJob("p9", 16),
       older = ipuJob(nullptr, 0);
  EXPECT_EQ(jobDevices(*flatbuffers::GetRoot<fb::JobInfo>(one.data())), "p9:0");
  EXPECT_EQ(jobDevices(*flatbuffers::GetRoot<fb::JobInfo>(four.data())), "p9:0,p9:1,p9:2,p9:3");
  EXPECT_EQ(jobDevices(*flatbuffers::GetRoot<fb::JobInfo>(many.data())), "p9:0..p9:15 (16 IPUs)");
  EXPECT_EQ(jobDevices(*flatbuffers::GetRoot<fb::JobInfo>(older.data())), "partition p9");
}

TEST(JobViewLiteralTest, DurationsReadAsSlurmPrintsThem) {
  EXPECT_EQ(durationText(0), "00:00:00");
  EXPECT_EQ(durationText(-3), "00:00:00");
  EXPECT_EQ(durationText(59.9), "00:00:59");
  EXPECT_EQ(durationText(3600), "01:00:00");
  EXPECT_EQ(durationText(90061), "1-01:01:01");
}

// A state from a newer daemon is named by its number, not left blank.
TEST(JobViewLiteralTest, AnUnknownStateIsNamedByItsNumber) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::CreateJobInfoDirect(fbb, 9, 1001, "bob", static_cast<fb::JobState>(9)));
  const auto& j = *flatbuffers::GetRoot<fb::JobInfo>(fbb.GetBufferPointer());
  EXPECT_EQ(stateText(j), "unknown (9)");
  EXPECT_EQ(readyText(j), "never");
}

}  // namespace
}  // namespace accel::ctl
