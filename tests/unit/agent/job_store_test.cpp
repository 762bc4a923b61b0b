#include "accel/agent/job_store.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

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

// Records exactly as earlier versions wrote them (data/job_records/, whose
// README.md names the commit of each writer). File N holds the fields of
// files 1..N-1 and those its commit added, with the same values throughout;
// its job id is 4200 + N.
constexpr const char* kRecordDir = ACCEL_SOURCE_DIR "/tests/unit/agent/data/job_records/";
constexpr const char* kRecordFiles[] = {
    "01-a674f24.json", "02-4160472.json", "03-92c94f8.json", "04-563182a.json", "05-4f69752.json",
    "06-fc379ff.json", "07-78f9457.json", "08-533f778.json", "09-fdd853d.json", "10-fe10b7f.json",
};

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// What a record of shape `n` (1-based, see kRecordFiles) must read as: the
// written value of every field it has, the default of every later one.
void expectRecordOfShape(const JobRecord& r, int n) {
  SCOPED_TRACE("shape " + std::to_string(n));
  const std::string dir = "/run/accel-agent/jobs/" + std::to_string(4200 + n);
  EXPECT_EQ(r.spec.job_id, static_cast<uint32_t>(4200 + n));
  EXPECT_EQ(r.spec.uid, 1001u);
  EXPECT_EQ(r.spec.gid, 1002u);
  EXPECT_EQ(r.spec.user, "alice");
  EXPECT_EQ(r.spec.partition, "pod");
  EXPECT_EQ(r.spec.gpus, "0,2");
  EXPECT_EQ(r.spec.ipus, 4u);
  EXPECT_EQ(r.spec.num_replicas, 2u);
  EXPECT_EQ(r.spec.ntasks, 8u);
  EXPECT_EQ(r.spec.appliance_time_sec, 3600);
  EXPECT_EQ(r.spec.appliance_signal, 10);
  EXPECT_EQ(r.spec.appliance_signal_lead_sec, 60u);
  EXPECT_EQ(r.phase, JobPhase::kReady);
  EXPECT_EQ(r.devices, (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(r.job_dir, dir);
  EXPECT_EQ(r.env, (std::vector<std::pair<std::string, std::string>>{
                       {"ACCEL_DEVICES", "cuda0,cuda2"}, {"ACCEL_JOB_DIR", dir}}));
  EXPECT_EQ(r.prolog_started_ns, 1763800000000000000);
  EXPECT_EQ(r.ready_ns, 1763800001500000000);
  EXPECT_EQ(r.last_error, "");
  // 4160472: steps and tasks.
  if (n >= 2) {
    EXPECT_EQ(r.steps, (std::vector<uint32_t>{0, kBatchStepId}));
    ASSERT_EQ(r.tasks.size(), 2u);
    EXPECT_EQ(r.tasks[0].step_id, kBatchStepId);
    EXPECT_EQ(r.tasks[0].pid, 31337);
    EXPECT_EQ(r.tasks[0].start_ticks, 123456u);
    EXPECT_EQ(r.tasks[1].step_id, 0u);
    EXPECT_EQ(r.tasks[1].pid, 31400);
    EXPECT_EQ(r.tasks[1].start_ticks, 123999u);
  } else {
    EXPECT_TRUE(r.steps.empty());
    EXPECT_TRUE(r.tasks.empty());
  }
  // 92c94f8: the V-IPU partition.
  EXPECT_EQ(r.ipu_partition, n >= 3 ? "p" + std::to_string(4200 + n) : "");
  // 563182a: the appliance budget.
  if (n >= 4) {
    EXPECT_EQ(r.budget.runs,
              (std::vector<ActiveInterval>{{"aj-17", 1763800010000000000, 1763800070000000000},
                                           {"steps", 1763800002000000000, 0}}));
    EXPECT_EQ(r.budget.warned_ns, 1763803540000000000);
  } else {
    EXPECT_TRUE(r.budget.runs.empty());
    EXPECT_EQ(r.budget.warned_ns, 0);
  }
  EXPECT_EQ(r.budget.enforced_ns, 0);
  EXPECT_EQ(r.budget.killed_ns, 0);
  // 4f69752 and fc379ff: surrogate steps.
  EXPECT_EQ(r.surrogates, n >= 5 ? std::vector<std::string>{"aj-17"} : std::vector<std::string>{});
  EXPECT_EQ(r.surrogate_steps, n >= 6 ? std::vector<uint32_t>{3} : std::vector<uint32_t>{});
  EXPECT_EQ(sparedSteps(r), r.surrogate_steps);
  // 78f9457: the job's nodes; unknown before, which leaves the job led here.
  EXPECT_EQ(r.spec.node, n >= 7 ? "sbn1" : "");
  EXPECT_EQ(r.spec.node_list, n >= 7 ? "sbn[1-2]" : "");
  EXPECT_EQ(r.spec.node_count, n >= 7 ? 2u : 0u);
  // 533f778: the warning to the batch shell; the steps before.
  EXPECT_EQ(r.spec.appliance_signal_batch, n >= 8);
  // fdd853d: the run of a requeued job; the first run before.
  EXPECT_EQ(r.spec.restart_count, n >= 9 ? 1u : 0u);
  // fe10b7f: what earlier runs used.
  EXPECT_EQ(r.budget.carried_ns, n >= 10 ? 120'000'000'000 : 0);
  EXPECT_EQ(r.spec.carry_note, "");
}

TEST(JobRecordFormat, EveryEarlierShapeIsReadWithItsValues) {
  int n = 0;
  for (const char* file : kRecordFiles) {
    ++n;
    const std::string text = readText(std::string(kRecordDir) + file);
    ASSERT_FALSE(text.empty()) << file;
    auto r = decodeRecord(text);
    ASSERT_TRUE(r.ok()) << file << ": " << r.error().message();
    expectRecordOfShape(*r, n);
    // Written again by this version, it reads back the same.
    auto again = decodeRecord(encodeRecord(*r));
    ASSERT_TRUE(again.ok()) << file;
    EXPECT_EQ(encodeRecord(*again), encodeRecord(*r)) << file;
  }
}

// The newest file is what this version writes, byte for byte. When the
// writer changes, add a file of the new shape (and keep the old ones).
TEST(JobRecordFormat, TheNewestFileIsWhatThisVersionWrites) {
  const std::string text = readText(std::string(kRecordDir) + std::end(kRecordFiles)[-1]);
  auto r = decodeRecord(text);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(encodeRecord(*r), text);
}

// An agent upgraded while jobs run finds their records as the old agent
// wrote them, and re-adopts every one.
TEST_F(JobStoreTest, RecordsOfEveryEarlierVersionAreLoaded) {
  JobStore store(root_ + "/jobs");
  ASSERT_TRUE(store.open().ok());
  int n = 0;
  for (const char* file : kRecordFiles) {
    ++n;
    const std::string name = root_ + "/jobs/" + std::to_string(4200 + n) + ".json";
    ASSERT_TRUE(writeFileAtomic(name, readText(std::string(kRecordDir) + file), 0600).ok());
  }
  auto loaded = store.loadAll();
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(loaded->problems.empty()) << loaded->problems.front();
  ASSERT_EQ(loaded->records.size(), std::size(kRecordFiles));
  for (const auto& r : loaded->records)
    expectRecordOfShape(r, static_cast<int>(r.spec.job_id) - 4200);
}

// A key this version does not know (a later version's) is ignored, whatever
// its type; a record of another format is refused rather than misread.
TEST(JobRecordFormat, UnknownKeysAreIgnoredAndAnotherFormatRefused) {
  const std::string text = readText(std::string(kRecordDir) + std::end(kRecordFiles)[-1]);
  ASSERT_EQ(text.front(), '{');
  const std::string later =
      R"({"a_later_field":{"nested":[1,"two",null]},"zz_later_count":-7,"later_note":"x",)" +
      text.substr(1);
  auto r = decodeRecord(later);
  ASSERT_TRUE(r.ok()) << r.error().message();
  expectRecordOfShape(*r, static_cast<int>(std::size(kRecordFiles)));
  EXPECT_EQ(encodeRecord(*r), text) << "unknown keys are not kept";

  const std::string format1 = R"("format":1,)";
  const auto at = text.find(format1);
  ASSERT_NE(at, std::string::npos);
  for (const char* other : {R"("format":2,)", R"("format":0,)", R"("format":"1",)"}) {
    std::string changed = text;
    changed.replace(at, format1.size(), other);
    auto refused = decodeRecord(changed);
    ASSERT_FALSE(refused.ok()) << other;
    EXPECT_NE(refused.error().message().find("format"), std::string::npos)
        << refused.error().message();
  }
  std::string without = text;
  without.erase(at, format1.size());
  auto unmarked = decodeRecord(without);
  ASSERT_TRUE(unmarked.ok()) << "a record without \"format\" is format 1";
  expectRecordOfShape(*unmarked, static_cast<int>(std::size(kRecordFiles)));
}

}  // namespace
}  // namespace accel::agent
