#include <gtest/gtest.h>

#include "accel/appliance/csctl_cli.h"
#include "script_client.h"

namespace accel::appliance {
namespace {

using namespace std::chrono_literals;
using test::ScriptDir;

constexpr const char* kListing = R"({"items": [
  {"name": "wsjob-vpd7iavtknrtvgonhe7mog", "labels": {"slurm-job-id": "65"}, "type": "compile",
   "state": "SUCCEEDED", "systems": 0, "user": "alice", "createTime": "2026-11-22T07:00:00Z",
   "startTime": "2026-11-22T07:00:01.5Z", "endTime": "2026-11-22T07:02:41Z"},
  {"name": "wsjob-z3pbtbl8sgmfqtivpazrtn", "labels": {"slurm-job-id": "65"}, "type": "execute",
   "state": "RUNNING", "systems": 1, "user": "alice", "createTime": "2026-11-22T07:02:42Z",
   "startTime": "2026-11-22T08:02:43+01:00", "endTime": null},
  {"name": "wsjob-notfromslurm", "labels": {}, "state": "RUNNING", "systems": 2}
]})";

TEST(CsctlParse, ReadsTheJobsOfSlurmJobs) {
  auto r = parseCsctlJobs(kListing);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->size(), 2u);
  const auto& compile = (*r)[0];
  EXPECT_EQ(compile.id, "wsjob-vpd7iavtknrtvgonhe7mog");
  EXPECT_EQ(compile.slurm_job_id, 65u);
  EXPECT_EQ(compile.state, ApplianceState::kSucceeded);
  EXPECT_EQ(compile.systems, 0u);
  EXPECT_EQ(compile.user, "alice");
  EXPECT_EQ(compile.start_ns - compile.create_ns, 1500000000);
  EXPECT_EQ(compile.end_ns - compile.start_ns, 159500000000);
  const auto& train = (*r)[1];
  EXPECT_EQ(train.state, ApplianceState::kRunning);
  EXPECT_EQ(train.systems, 1u);
  EXPECT_EQ(train.start_ns - train.create_ns, 1000000000);  // +01:00 offset applied
  EXPECT_EQ(train.end_ns, 0);
}

TEST(CsctlParse, EmptyListingHasNoJobs) {
  auto r = parseCsctlJobs(R"({"items": []})");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
  r = parseCsctlJobs(R"({"items": null})");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

TEST(CsctlParse, MalformedListingsAreErrors) {
  std::string truncated = std::string(kListing).substr(0, 200);
  const std::string bad[] = {
      "", "garbage", "[]", R"({"items": 3})", truncated,
      R"({"items": [{"name": "wsjob-a", "labels": {"slurm-job-id": "1"}, "state": "EXPLODED"}]})",
      R"({"items": [{"name": "Bad Name", "labels": {"slurm-job-id": "1"}, "state": "RUNNING"}]})",
      R"({"items": [{"name": "wsjob-a", "labels": {"slurm-job-id": "1"}, "state": "RUNNING", "systems": -1}]})",
      R"({"items": [{"name": "wsjob-a", "labels": {"slurm-job-id": "1"}, "state": "RUNNING", "createTime": "yesterday"}]})",
      R"({"items": [{"name": "wsjob-a", "state": 7}]})",
  };
  for (const auto& text : bad) EXPECT_FALSE(parseCsctlJobs(text).ok()) << text;
}

TEST(CsctlParse, LabelsThatAreNotJobIdsAreIgnored) {
  auto r = parseCsctlJobs(R"({"items": [
      {"name": "wsjob-a", "labels": {"slurm-job-id": "12x"}, "state": "RUNNING"},
      {"name": "wsjob-b", "labels": {"slurm-job-id": "99999999999"}, "state": "RUNNING"},
      {"name": "wsjob-c", "labels": {"slurm-job-id": 5}, "state": "RUNNING"}]})");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

TEST(Rfc3339, ParsesTheFormsTheClientPrints) {
  EXPECT_EQ(*parseRfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*parseRfc3339("1970-01-01T00:00:01.25Z"), 1250000000);
  EXPECT_EQ(*parseRfc3339("1970-01-01T01:00:00+01:00"), 0);
  EXPECT_EQ(*parseRfc3339("1969-12-31T23:00:00-01:00"), 0);
  for (const char* bad : {"", "1970-01-01", "1970-13-01T00:00:00Z", "1970-01-01T00:00:00",
                          "1970-01-01T00:00:00+1", "1970-01-01T25:00:00Z", "1970-01-01T00:00:00Zjunk",
                          "2610-12-22T07:00:01.123456789-05:30", "1899-12-31T23:59:59Z"})
    EXPECT_FALSE(parseRfc3339(bad).ok()) << bad;
}

TEST(JobIds, OnlyPlainNamesAreAccepted) {
  EXPECT_TRUE(isValidJobId("wsjob-vpd7iavtknrtvgonhe7mog"));
  for (const char* bad : {"", "-x", "Wsjob", "a b", "a;rm", "../x", "x/y"}) EXPECT_FALSE(isValidJobId(bad)) << bad;
  EXPECT_FALSE(isValidJobId(std::string(64, 'a')));
}

TEST(CsctlCli, ListsAndCancelsThroughTheClient) {
  ScriptDir d;
  d.write("listing", kListing);
  auto csctl = d.script("csctl",
                        "echo \"$@\" >> \"$DIR/calls\"\n"
                        "[ \"$1\" = get ] && cat \"$DIR/listing\"\nexit 0");
  CsctlCli cli(csctl, 5000ms);
  auto jobs = cli.jobs();
  ASSERT_TRUE(jobs.ok()) << jobs.error().message();
  EXPECT_EQ(jobs->size(), 2u);
  EXPECT_TRUE(cli.cancel("wsjob-z3pbtbl8sgmfqtivpazrtn").ok());
  EXPECT_EQ(d.read("calls"), "get jobs -o json\ncancel job wsjob-z3pbtbl8sgmfqtivpazrtn\n");
  EXPECT_FALSE(cli.cancel("wsjob-x; reboot").ok());
}

TEST(CsctlCli, CancellingAnUnknownJobSucceeds) {
  ScriptDir d;
  auto csctl = d.script("csctl", "echo 'Error: job wsjob-x not found' >&2; exit 1");
  CsctlCli cli(csctl, 5000ms);
  EXPECT_TRUE(cli.cancel("wsjob-x").ok());
}

TEST(CsctlCli, MalformedOutputAndOutagesAreErrorsNotCrashes) {
  ScriptDir d;
  auto garbage = d.script("garbage", "printf '{\"items\": [{\"name\": '");
  auto r = CsctlCli(garbage, 5000ms).jobs();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kParse);
  auto down = d.script("down", "echo x >> \"$DIR/calls\"; echo 'Error: connection refused' >&2; exit 1");
  r = CsctlCli(down, 5000ms).jobs();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(d.read("calls"), "x\nx\n");  // retried once
  auto hang = d.script("hang", "exec sleep 60");
  r = CsctlCli(hang, 200ms).jobs();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kTimeout);
}

}  // namespace
}  // namespace accel::appliance
