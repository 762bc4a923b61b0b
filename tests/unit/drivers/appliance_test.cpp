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
  const std::string bad[] = {"", "garbage", "[]", R"({"items": 3})", truncated, R"({"jobs": []})"};
  for (const auto& text : bad) EXPECT_FALSE(parseCsctlJobs(text).ok()) << text;
}

// One bad item is that item's problem: it comes back marked, with what could
// be read of it (label, owner, name), and the other items are read as usual.
TEST(CsctlParse, AMalformedItemIsKeptMarkedAndSpoilsNoOther) {
  const std::pair<std::string, std::string> bad[] = {
      {R"({"name": "wsjob-a", "labels": {"slurm-job-id": "7"}, "user": "bob", "uid": 1002, "state": "EXPLODED"})",
       "unknown job state \"EXPLODED\""},
      {R"({"name": "Bad Name", "labels": {"slurm-job-id": "7"}, "user": "bob", "uid": 1002, "state": "RUNNING"})",
       "item without a valid \"name\""},
      {R"({"name": "wsjob-a", "labels": {"slurm-job-id": "7"}, "user": "bob", "uid": 1002, "state": "RUNNING", "systems": -1})",
       "bad \"systems\""},
      {R"({"name": "wsjob-a", "labels": {"slurm-job-id": "7"}, "user": "bob", "uid": 1002, "state": "RUNNING", "systems": 5000})",
       "bad \"systems\""},
      {R"({"name": "wsjob-a", "labels": {"slurm-job-id": "7"}, "user": "bob", "uid": 1002, "state": "RUNNING", "createTime": "yesterday"})",
       "createTime: bad time \"yesterday\""},
      {R"({"name": "wsjob-a", "labels": {"slurm-job-id": "7"}, "user": "bob", "uid": 1002, "state": 7})",
       "no state"},
  };
  const std::string good =
      R"({"name": "wsjob-b", "labels": {"slurm-job-id": "8"}, "user": "carol", "uid": 1003, "state": "RUNNING",
          "systems": 1, "startTime": "2026-11-22T07:00:00Z"})";
  for (const auto& [item, why] : bad) {
    auto r = parseCsctlJobs(R"({"items": [)" + item + "," + good + "]}");
    ASSERT_TRUE(r.ok()) << item << ": " << r.error().message();
    ASSERT_EQ(r->size(), 2u) << item;
    const auto& kept = (*r)[0];
    EXPECT_EQ(kept.unreadable, why) << item;
    EXPECT_EQ(kept.slurm_job_id, 7u);
    EXPECT_EQ(kept.user, "bob");
    EXPECT_EQ(kept.uid, 1002);
    EXPECT_EQ(kept.id, item.find("Bad Name") == std::string::npos ? "wsjob-a" : "");
    EXPECT_EQ(kept.start_ns, 0);  // nothing of the rest is trusted
    EXPECT_EQ(kept.state, ApplianceState::kQueued);
    const auto& other = (*r)[1];
    EXPECT_EQ(other.unreadable, "");
    EXPECT_EQ(other.id, "wsjob-b");
    EXPECT_EQ(other.state, ApplianceState::kRunning);
    EXPECT_EQ(other.uid, 1003);
    EXPECT_GT(other.start_ns, 0);
  }
}

TEST(CsctlParse, OwnersAreReadAsReportedAndOddOnesAsNone) {
  auto r = parseCsctlJobs(R"({"items": [
      {"name": "wsjob-a", "labels": {"slurm-job-id": "1"}, "state": "RUNNING", "user": "alice", "uid": 1001},
      {"name": "wsjob-b", "labels": {"slurm-job-id": "1"}, "state": "RUNNING", "user": "alice"},
      {"name": "wsjob-c", "labels": {"slurm-job-id": "1"}, "state": "RUNNING", "uid": -5, "user": "a b"},
      {"name": "wsjob-d", "labels": {"slurm-job-id": "1"}, "state": "RUNNING", "uid": 4294967295, "user": 3},
      {"name": "wsjob-e", "labels": {"slurm-job-id": "1"}, "state": "RUNNING", "uid": "1001",
       "user": ")" + std::string(65, 'x') +
                          R"("}]})");
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[0].user, "alice");
  EXPECT_EQ((*r)[0].uid, 1001);
  EXPECT_EQ((*r)[1].uid, -1);
  for (size_t i = 2; i < 5; ++i) {
    EXPECT_EQ((*r)[i].user, "") << i;
    EXPECT_EQ((*r)[i].uid, -1) << i;
    EXPECT_EQ((*r)[i].unreadable, "") << i;  // an odd owner is no reason to distrust the rest
  }
}

TEST(CsctlParse, OwnershipGoesByUidWhenReportedElseByName) {
  ApplianceJob j;
  j.user = "alice";
  j.uid = 1001;
  EXPECT_TRUE(ownedBy(j, 1001, "alice"));
  EXPECT_TRUE(ownedBy(j, 1001, ""));
  EXPECT_FALSE(ownedBy(j, 1002, "alice"));  // the uid decides
  j.uid = -1;
  EXPECT_TRUE(ownedBy(j, 1002, "alice"));
  EXPECT_FALSE(ownedBy(j, 1001, "bob"));
  EXPECT_FALSE(ownedBy(j, 1001, ""));
  j.user.clear();
  EXPECT_FALSE(ownedBy(j, 0, ""));  // no owner reported: nobody's
}

TEST(CsctlParse, ListingsLongerThanTheCapAreRefused) {
  std::string many = R"({"items": [)";
  for (size_t i = 0; i <= kMaxListedJobs; ++i) many += i == 0 ? "{}" : ",{}";
  many += "]}";
  auto r = parseCsctlJobs(many);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kParse);
  std::string enough = R"({"items": [{})";
  for (size_t i = 1; i < kMaxListedJobs; ++i) enough += ",{}";
  enough += "]}";
  r = parseCsctlJobs(enough);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());  // items without a label are not ours
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
  for (const char* bad :
       {"", "1970-01-01", "1970-13-01T00:00:00Z", "1970-01-01T00:00:00", "1970-01-01T00:00:00+1",
        "1970-01-01T25:00:00Z", "1970-01-01T00:00:00Zjunk", "2610-12-22T07:00:01.123456789-05:30",
        "1899-12-31T23:59:59Z"})
    EXPECT_FALSE(parseRfc3339(bad).ok()) << bad;
}

TEST(JobIds, OnlyPlainNamesAreAccepted) {
  EXPECT_TRUE(isValidJobId("wsjob-vpd7iavtknrtvgonhe7mog"));
  for (const char* bad : {"", "-x", "Wsjob", "a b", "a;rm", "../x", "x/y"})
    EXPECT_FALSE(isValidJobId(bad)) << bad;
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
  auto down =
      d.script("down", "echo x >> \"$DIR/calls\"; echo 'Error: connection refused' >&2; exit 1");
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
