// The fake `csctl` and the appliance job model. Records are written with
// create times in the past, so every state is checked without waiting.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "appliance_jobs.h"
#include "fake_runner.h"
#include "fake_state.h"

namespace accel::hw_mock {
namespace {

using nlohmann::json;
using test::FakeEnv;
using test::RunResult;

ApplianceJob record(const std::string& slurm_job, double age, double queue, double run,
                    int systems = 1) {
  ApplianceJob job;
  job.id = newJobId();
  job.labels = {{"slurm-job-id", slurm_job}};
  job.systems = systems;
  job.user = "alice";
  job.create_time = nowSeconds() - age;
  job.queue_seconds = queue;
  job.run_seconds = run;
  return job;
}

void store(const FakeEnv& env, const ApplianceJob& job) {
  auto dir = jobsDir(env.root() + "/appliance");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(saveJob(*dir, job).ok());
}

std::string ownName() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw != nullptr ? pw->pw_name : std::to_string(::geteuid());
}

json getJobs(const FakeEnv& env, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"get", "jobs", "-o", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  RunResult r = env.run(FAKE_CSCTL, args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out)["items"];
}

json onlyJob(const FakeEnv& env) {
  json items = getJobs(env);
  EXPECT_EQ(items.size(), 1u);
  return items.empty() ? json::object() : items[0];
}

TEST(ApplianceModel, PhasesFollowTheClock) {
  ApplianceJob job = record("1", 0, 10, 20);
  const double t0 = job.create_time;
  EXPECT_EQ(viewAt(job, t0 + 5).phase, JobPhase::kQueued);
  EXPECT_FALSE(viewAt(job, t0 + 5).start_time.has_value());
  EXPECT_EQ(viewAt(job, t0 + 10).phase, JobPhase::kRunning);
  EXPECT_DOUBLE_EQ(*viewAt(job, t0 + 15).start_time, t0 + 10);
  EXPECT_FALSE(viewAt(job, t0 + 15).end_time.has_value());
  EXPECT_EQ(viewAt(job, t0 + 30).phase, JobPhase::kSucceeded);
  EXPECT_DOUBLE_EQ(*viewAt(job, t0 + 40).end_time, t0 + 30);
  job.will_fail = true;
  EXPECT_EQ(viewAt(job, t0 + 30).phase, JobPhase::kFailed);
}

TEST(ApplianceModel, CancelledJobStaysCancelled) {
  ApplianceJob job = record("1", 0, 10, 20);
  const double t0 = job.create_time;
  job.cancel_time = t0 + 4;
  for (double t : {t0 + 4, t0 + 12, t0 + 100}) {
    JobView v = viewAt(job, t);
    EXPECT_EQ(v.phase, JobPhase::kCancelled);
    EXPECT_FALSE(v.start_time.has_value());  // cancelled while queued: never ran
    EXPECT_DOUBLE_EQ(*v.end_time, t0 + 4);
  }
  job.cancel_time = t0 + 12;
  EXPECT_DOUBLE_EQ(*viewAt(job, t0 + 50).start_time, t0 + 10);
}

TEST(ApplianceModel, RecordRoundTripsAndIdsHaveTheApplianceShape) {
  ApplianceJob job = record("77", 3.25, 1.5, 2.5, 0);
  job.cancel_time = job.create_time + 0.125;
  auto back = recordFromJson(recordToJson(job).dump());
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->id, job.id);
  EXPECT_EQ(back->labels, job.labels);
  EXPECT_EQ(back->type(), "compile");
  EXPECT_DOUBLE_EQ(back->create_time, job.create_time);
  EXPECT_DOUBLE_EQ(*back->cancel_time, *job.cancel_time);
  EXPECT_TRUE(isJobId(job.id));
  EXPECT_NE(newJobId(), newJobId());
  EXPECT_FALSE(isJobId("wsjob-ABCDEFGHIJKLMNOPQRSTUV"));
  EXPECT_FALSE(isJobId("wsjob-short"));
  EXPECT_FALSE(recordFromJson("{\"id\": \"wsjob-").ok());
}

TEST(FakeCsctl, JsonShowsEachStateWithTimes) {
  FakeEnv env;
  ApplianceJob queued = record("1", 1, 1000, 10);
  ApplianceJob running = record("2", 10, 5, 1000);
  ApplianceJob done = record("3", 100, 10, 20, 0);
  ApplianceJob failed = record("4", 100, 10, 20);
  failed.will_fail = true;
  for (const auto& j : {queued, running, done, failed}) store(env, j);
  json items = getJobs(env);
  ASSERT_EQ(items.size(), 4u);
  std::map<std::string, json> by_job;
  for (const json& item : items) by_job[item["labels"]["slurm-job-id"].get<std::string>()] = item;
  EXPECT_EQ(by_job["1"]["state"], "QUEUED");
  EXPECT_TRUE(by_job["1"]["startTime"].is_null());
  EXPECT_EQ(by_job["2"]["state"], "RUNNING");
  EXPECT_EQ(by_job["2"]["startTime"], rfc3339(running.create_time + 5));
  EXPECT_TRUE(by_job["2"]["endTime"].is_null());
  EXPECT_EQ(by_job["3"]["state"], "SUCCEEDED");
  EXPECT_EQ(by_job["3"]["type"], "compile");
  EXPECT_EQ(by_job["3"]["systems"], 0);
  EXPECT_EQ(by_job["3"]["endTime"], rfc3339(done.create_time + 30));
  EXPECT_EQ(by_job["4"]["state"], "FAILED");
  EXPECT_EQ(by_job["4"]["type"], "execute");
  EXPECT_EQ(by_job["4"]["name"], failed.id);
  // The test's records are its own files: root's keep the owner they hold.
  EXPECT_EQ(by_job["4"]["user"], ::geteuid() == 0 ? "alice" : ownName());
  EXPECT_EQ(by_job["4"]["createTime"], rfc3339(failed.create_time));
}

// The owner csctl reports is the submitter's, as the appliance knows it: a
// record written by an ordinary user names that user, whatever it says.
TEST(FakeCsctl, OwnerIsTheRecordFilesOwnerUnlessRoot) {
  FakeEnv env;
  ApplianceJob forged = record("5", 1, 100, 100);
  forged.user = "someone-else";
  forged.uid = 4321;
  store(env, forged);
  ApplianceJob plain = record("6", 1, 100, 100);
  store(env, plain);  // no uid recorded
  auto dir = jobsDir(env.root() + "/appliance");
  ASSERT_TRUE(dir.ok());
  unsigned expected_uid = ::geteuid();
  if (expected_uid == 0) {
    // As root, hand the forged record to an ordinary uid, as if that user wrote it.
    expected_uid = 54321;
    ASSERT_EQ(::chown((*dir + "/" + forged.id + ".json").c_str(), expected_uid, 0), 0);
  }
  std::map<std::string, json> by_job;
  for (const json& item : getJobs(env))
    by_job[item["labels"]["slurm-job-id"].get<std::string>()] = item;
  ASSERT_EQ(by_job.size(), 2u);
  EXPECT_EQ(by_job["5"]["uid"], expected_uid);
  EXPECT_NE(by_job["5"]["user"], "someone-else");
  if (::geteuid() == 0) {
    EXPECT_EQ(by_job["6"]["user"], "alice");  // root's file: as recorded, no uid
    EXPECT_FALSE(by_job["6"].contains("uid"));
  } else {
    EXPECT_EQ(by_job["6"]["uid"], expected_uid);
    EXPECT_EQ(by_job["6"]["user"], ownName());
  }
}

TEST(FakeCsctl, LabelSelectorFilters) {
  FakeEnv env;
  ApplianceJob a = record("11", 1, 100, 100);
  ApplianceJob b = record("12", 1, 100, 100);
  b.labels["phase"] = "train";
  store(env, a);
  store(env, b);
  json items = getJobs(env, {"-l", "slurm-job-id=12"});
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["name"], b.id);
  EXPECT_EQ(getJobs(env, {"-lslurm-job-id=12,phase=train"}).size(), 1u);
  EXPECT_TRUE(getJobs(env, {"-l", "slurm-job-id=12,phase=eval"}).empty());
  EXPECT_TRUE(getJobs(env, {"-l", "slurm-job-id=13"}).empty());
  EXPECT_EQ(getJobs(env).size(), 2u);
}

TEST(FakeCsctl, TableListsNameStateAndLabels) {
  FakeEnv env;
  ApplianceJob job = record("65", 100, 10, 20);
  store(env, job);
  RunResult r = env.run(FAKE_CSCTL, {"get", "jobs"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("NAME")) << r.out;
  EXPECT_NE(r.out.find("STATE"), std::string::npos);
  auto row = r.out.substr(r.out.find('\n') + 1);
  EXPECT_TRUE(row.starts_with(job.id)) << r.out;
  EXPECT_NE(row.find("SUCCEEDED"), std::string::npos);
  EXPECT_NE(row.find("slurm-job-id=65"), std::string::npos);
}

TEST(FakeCsctl, EmptyApplianceListsNoItems) {
  FakeEnv env;
  EXPECT_TRUE(getJobs(env).empty());
}

TEST(FakeCsctl, CancelRunningJobThenAgain) {
  FakeEnv env;
  ApplianceJob job = record("5", 10, 1, 1000);
  store(env, job);
  RunResult r = env.run(FAKE_CSCTL, {"cancel", "job", job.id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cancelled"), std::string::npos) << r.out;
  json item = onlyJob(env);
  EXPECT_EQ(item["state"], "CANCELLED");
  EXPECT_FALSE(item["startTime"].is_null());
  EXPECT_FALSE(item["endTime"].is_null());
  RunResult again = env.run(FAKE_CSCTL, {"cancel", "job", job.id});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.out.find("already ended"), std::string::npos) << again.out;
}

TEST(FakeCsctl, CancelledWhileQueuedNeverRuns) {
  FakeEnv env;
  ApplianceJob job = record("6", 0, 0.3, 100);
  store(env, job);
  ASSERT_EQ(env.run(FAKE_CSCTL, {"cancel", "job", job.id}).exit_code, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // past its queue time
  json item = onlyJob(env);
  EXPECT_EQ(item["state"], "CANCELLED");
  EXPECT_TRUE(item["startTime"].is_null());
}

TEST(FakeCsctl, CancelEndedJobSaysSoAndKeepsItsState) {
  FakeEnv env;
  ApplianceJob job = record("7", 100, 10, 20);
  store(env, job);
  RunResult r = env.run(FAKE_CSCTL, {"cancel", "job", job.id});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("already ended"), std::string::npos) << r.out;
  EXPECT_EQ(onlyJob(env)["state"], "SUCCEEDED");
}

TEST(FakeCsctl, CancelUnknownJobIsNotFound) {
  FakeEnv env;
  for (const char* id : {"wsjob-aaaaaaaaaaaaaaaaaaaaaa", "../../etc/passwd"}) {
    RunResult r = env.run(FAKE_CSCTL, {"cancel", "job", id});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;
  }
}

TEST(FakeCsctl, UsageErrorsExitTwo) {
  FakeEnv env;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{}, std::vector<std::string>{"get", "jobs", "-o", "yaml"},
        std::vector<std::string>{"get", "jobs", "-l", "novalue"},
        std::vector<std::string>{"get", "jobs", "--watch"},
        std::vector<std::string>{"cancel", "job"},
        std::vector<std::string>{"delete", "job", "x"}}) {
    EXPECT_EQ(env.run(FAKE_CSCTL, args).exit_code, 2);
  }
}

}  // namespace
}  // namespace accel::hw_mock
