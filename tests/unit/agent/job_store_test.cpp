#include "accel/agent/job_store.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "accel/common/safe_file.h"
#include "temp_dir.h"

namespace accel::agent {
namespace {

class JobStoreTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }
  support::TempDir tmp_{"accel-store"};
  std::string root_ = tmp_.path();
};

JobRecord sample(uint32_t id) {
  JobRecord r;
  r.spec.job_id = id;
  r.spec.uid = 1001;
  r.spec.gid = 1002;
  r.spec.user = "alice";
  r.spec.gpus = "0,2";
  r.spec.ipus = 4;
  r.spec.appliance_time_sec = 600;
  r.spec.appliance_signal = 12;
  r.spec.appliance_signal_batch = true;
  r.spec.restart_count = 2;
  r.spec.carry_note = "earlier runs unknown";
  r.budget.carried_ns = 4'000'000'000;
  r.phase = JobPhase::kReady;
  r.devices = {0, 2};
  r.job_dir = "/run/accel-agent/jobs/" + std::to_string(id);
  r.env = {{"ACCEL_DEVICES", "cuda0,cuda2"}, {"ACCEL_JOB_DIR", r.job_dir}};
  r.prolog_started_ns = 11;
  r.ready_ns = 22;
  return r;
}

TEST_F(JobStoreTest, SaveLoadRoundTrip) {
  JobStore store(root_ + "/jobs");
  ASSERT_TRUE(store.open().ok());
  ASSERT_TRUE(store.save(sample(7)).ok());
  ASSERT_TRUE(store.save(sample(8)).ok());
  ASSERT_TRUE(store.remove(8).ok());
  ASSERT_TRUE(store.remove(9).ok());  // unknown: not an error
  auto loaded = store.loadAll();
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->records.size(), 1u);
  const auto& r = loaded->records[0];
  EXPECT_EQ(r.spec.job_id, 7u);
  EXPECT_EQ(r.spec.user, "alice");
  EXPECT_EQ(r.spec.appliance_time_sec, 600);
  EXPECT_EQ(r.spec.appliance_signal, 12);
  EXPECT_TRUE(r.spec.appliance_signal_batch);
  EXPECT_EQ(r.spec.restart_count, 2u);
  EXPECT_EQ(r.spec.carry_note, "earlier runs unknown");
  EXPECT_EQ(r.budget.carried_ns, 4'000'000'000);
  EXPECT_EQ(r.phase, JobPhase::kReady);
  EXPECT_EQ(r.devices, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(r.env[0].second, "cuda0,cuda2");
  EXPECT_EQ(r.ready_ns, 22);
  EXPECT_TRUE(loaded->problems.empty());
}

TEST_F(JobStoreTest, CorruptRecordIsReportedNotFatal) {
  JobStore store(root_ + "/jobs");
  ASSERT_TRUE(store.open().ok());
  ASSERT_TRUE(store.save(sample(7)).ok());
  ASSERT_TRUE(writeFileAtomic(root_ + "/jobs/8.json", "{\"job_id\": 8, \"phase\":", 0600).ok());
  ASSERT_TRUE(writeFileAtomic(root_ + "/jobs/9.json", encodeRecord(sample(10)), 0600).ok());
  auto loaded = store.loadAll();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->records.size(), 1u);
  EXPECT_EQ(loaded->problems.size(), 2u);
}

TEST(JobRecordTest, DecodeRejectsGarbageAndUnknownPhase) {
  EXPECT_FALSE(decodeRecord("").ok());
  EXPECT_FALSE(decodeRecord("[1,2]").ok());
  EXPECT_FALSE(decodeRecord("{\"job_id\":1,\"uid\":0,\"gid\":0,\"phase\":\"flying\"}").ok());
  EXPECT_FALSE(decodeRecord("{\"job_id\":\"x\",\"uid\":0,\"gid\":0,\"phase\":\"ready\"}").ok());
  // Found by fuzz_job_record: a float where an integer belongs was cast
  // with undefined behaviour. Wrong types and out-of-range values are errors.
  EXPECT_FALSE(
      decodeRecord(
          "{\"job_id\":1,\"uid\":0,\"gid\":0,\"phase\":\"ready\",\"appliance_signal\":1.2e79}")
          .ok());
  EXPECT_FALSE(
      decodeRecord("{\"job_id\":4294967296,\"uid\":0,\"gid\":0,\"phase\":\"ready\"}").ok());
  EXPECT_FALSE(decodeRecord("{\"job_id\":-1,\"uid\":0,\"gid\":0,\"phase\":\"ready\"}").ok());
  EXPECT_FALSE(
      decodeRecord("{\"job_id\":1,\"uid\":0,\"gid\":0,\"phase\":\"ready\",\"tasks\":[[1,2]]}")
          .ok());
  EXPECT_FALSE(
      decodeRecord("{\"job_id\":1,\"uid\":0,\"gid\":0,\"phase\":\"ready\",\"env\":[[1,2]]}").ok());
  EXPECT_FALSE(
      decodeRecord("{\"job_id\":1,\"uid\":0,\"gid\":0,\"phase\":\"ready\",\"user\":5}").ok());
  EXPECT_FALSE(
      decodeRecord(
          "{\"job_id\":1,\"uid\":0,\"gid\":0,\"phase\":\"ready\",\"appliance_signal_batch\":1}")
          .ok());
  auto ok = decodeRecord("{\"job_id\":1,\"uid\":0,\"gid\":0,\"phase\":\"ready\",\"future_key\":3}");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->phase, JobPhase::kReady);
  EXPECT_FALSE(ok->spec.appliance_signal_batch) << "a record from before B: warns the steps";
}

// What runs a limit's clock here: an appliance, IPUs, or devices of the job.
TEST(JobRecordTest, ALimitIsMeasurableWhereSomethingRunsItsClock) {
  JobRequestSpec spec;
  spec.job_id = 3;
  EXPECT_TRUE(limitMeasurable(spec, {}, false)) << "no limit: nothing to measure";
  spec.appliance_time_sec = 60;
  EXPECT_FALSE(limitMeasurable(spec, {}, false));
  EXPECT_TRUE(limitMeasurable(spec, {}, true)) << "the node reads an appliance";
  EXPECT_TRUE(limitMeasurable(spec, {1}, false)) << "the job holds a GPU here";
  spec.ipus = 2;
  EXPECT_TRUE(limitMeasurable(spec, {}, false)) << "the job holds IPUs of the POD";
}

}  // namespace
}  // namespace accel::agent
