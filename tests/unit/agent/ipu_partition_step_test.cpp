// Jobs that span nodes: the V-IPU partition is made and removed by the job's
// leader only; a follower waits for it and writes the IPUoF files of every
// GCD. Two job managers stand for two nodes, over one fake controller; the
// follower's clock and sleep are the test's, so waiting takes no time.
#include "accel/agent/ipu_partition_step.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include "accel/agent/env_file_step.h"
#include "accel/agent/job_dir_step.h"
#include "accel/agent/job_manager.h"
#include "accel/agent/job_nodes.h"
#include "accel/common/safe_file.h"
#include "fake_clock.h"
#include "temp_dir.h"

namespace accel::agent {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

// One V-IPU controller shared by every node: partitions by name, and a count
// of each kind of call.
class FakePartitionController : public ipu::PartitionController {
 public:
  Status create(const ipu::PartitionSpec& spec) override {
    std::lock_guard<std::mutex> g(mu_);
    ++creates;
    if (parts.count(spec.name) != 0)
      return Error(ErrorCode::kConflict, spec.name + " already exists");
    parts[spec.name] = spec;
    return okStatus();
  }
  Status remove(const std::string& name) override {
    std::lock_guard<std::mutex> g(mu_);
    ++removes;
    parts.erase(name);
    return okStatus();
  }
  Result<std::vector<ipu::GcdConfig>> ipuofConfigs(const std::string& name) override {
    std::lock_guard<std::mutex> g(mu_);
    ++gets;
    if (get_error) return *get_error;
    auto it = parts.find(name);
    if (it == parts.end()) return Error(ErrorCode::kNotFound, "partition '" + name + "' not found");
    std::vector<ipu::GcdConfig> out;
    for (uint32_t i = 0; i < it->second.gcds; ++i)
      out.push_back(
          {i, "{\"partition_id\": \"" + name + "\", \"gcd_index\": " + std::to_string(i) + "}\n"});
    return out;
  }
  std::string describe() const override { return "fake vipu"; }

  std::map<std::string, ipu::PartitionSpec> parts;
  int creates = 0, removes = 0, gets = 0;
  std::optional<Error> get_error;

 private:
  std::mutex mu_;
};

// A step after the partition that fails when told to (a fabric that cannot
// be set up, say): the node's own work after the partition is rolled back.
class FailingStep : public JobStep {
 public:
  explicit FailingStep(bool* fail) : fail_(fail) {}
  std::string_view name() const override { return "after"; }
  Status setUp(JobRecord&) override {
    return *fail_ ? Status(Error(ErrorCode::kIo, "the node's own step failed")) : okStatus();
  }
  Status tearDown(const JobRecord&) override { return okStatus(); }

 private:
  bool* fail_;
};

// One node: its own run directory, IPU root and job manager.
struct Node {
  std::string name;
  std::string root;
  // The node's clock while it waits: advanced only by its sleeps.
  support::FakeClock clock{0, 0};
  int sleeps = 0;
  std::vector<milliseconds> pauses;
  milliseconds first_interval = 150ms;  // a steady 150 ms unless a test says otherwise
  std::function<void()> on_sleep;       // runs at each sleep (another node's prolog)
  bool fail_after = false;
  std::unique_ptr<Clock> wait_clock;       // the follower wait's: `clock`, counting the sleeps
  support::FakeClock manager_clock{1000};  // the job manager's, which never moves
  std::unique_ptr<JobManager> manager;     // after the clocks it reads
};

// What a node's follower wait reads and sleeps on: the node's clock, each
// sleep counted and recorded.
class WaitClock final : public Clock {
 public:
  explicit WaitClock(Node& n) : n_(n) {}
  int64_t wallNs() const override { return n_.clock.wallNs(); }
  int64_t monoNs() const override { return n_.clock.monoNs(); }
  void sleepFor(std::chrono::nanoseconds d) const override {
    n_.clock.advance(d);
    ++n_.sleeps;
    n_.pauses.push_back(std::chrono::duration_cast<milliseconds>(d));
    if (n_.on_sleep) n_.on_sleep();
  }

 private:
  Node& n_;
};

class IpuPartitionStepTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }

  Node& node(const std::string& name) {
    auto& n = nodes_[name];
    n.name = name;
    n.root = root_ + "/" + name;
    EXPECT_TRUE(makeDirectory(n.root, 0755).ok());
    EXPECT_TRUE(makeDirectory(n.root + "/jobs", 0755).ok());
    EXPECT_TRUE(makeDirectory(n.root + "/ipuof", 0755).ok());
    start(n);
    return n;
  }

  // (Re)starts the node's manager over its state directory, as a daemon start does.
  void start(Node& n) {
    FollowerWait wait;
    wait.budget = [] { return milliseconds(2000); };
    wait.first_interval = n.first_interval;
    wait.interval = 150ms;
    if (!n.wait_clock) n.wait_clock = std::make_unique<WaitClock>(n);
    wait.clock = n.wait_clock.get();
    VipuConfig vipu;
    vipu.api_host = "10.1.2.3";
    vipu.api_port = 8090;
    std::vector<std::unique_ptr<JobStep>> steps;
    steps.push_back(std::make_unique<JobDirStep>(n.root + "/jobs", n.root + "/ipuof"));
    steps.push_back(std::make_unique<IpuPartitionStep>(controller_, vipu, std::move(wait)));
    steps.push_back(std::make_unique<FailingStep>(&n.fail_after));
    steps.push_back(std::make_unique<EnvFileStep>());
    n.manager.reset();
    n.manager = std::make_unique<JobManager>(JobStore(n.root + "/state"), Inventory{},
                                             std::move(steps), n.manager_clock);
    auto r = n.manager->recover();
    EXPECT_TRUE(r.ok());
  }

  // Job 42 on nodes sbn1 (its leader) and sbn2, as slurmd tells each.
  static JobRequestSpec spec(const std::string& node, uint32_t ntasks) {
    JobRequestSpec s;
    s.job_id = 42;
    s.uid = 4242;
    s.gid = 4343;
    s.user = "alice";
    s.ipus = 4;
    s.ntasks = ntasks;
    s.node = node;
    s.node_list = "sbn[1-2]";
    s.node_count = 2;
    return s;
  }

  static std::map<std::string, std::string> envOf(const JobRecord& r) {
    return {r.env.begin(), r.env.end()};
  }
  static bool exists(const std::string& p) {
    struct stat st {};
    return lstat(p.c_str(), &st) == 0;
  }
  static std::string read(const std::string& p) {
    auto t = readFileNoFollow(p);
    return t.ok() ? *t : "";
  }

  support::TempDir tmp_{"accel-ipu-step"};
  std::string root_ = tmp_.path();
  std::shared_ptr<FakePartitionController> controller_ =
      std::make_shared<FakePartitionController>();
  std::map<std::string, Node> nodes_;
};

TEST_F(IpuPartitionStepTest, LeaderMakesThePartitionOnceAndTheFollowerWaitsForItAndWritesEveryGcd) {
  Node& leader = node("sbn1");
  Node& follower = node("sbn2");
  // The follower's prolog runs first; the leader's gets going during its third wait.
  follower.on_sleep = [&] {
    if (follower.sleeps == 3) {
      auto r = leader.manager->prolog(spec("sbn1", 2));
      EXPECT_TRUE(r.ok()) << r.error().message();
    }
  };
  auto f = follower.manager->prolog(spec("sbn2", 1));  // one task here; the partition has two GCDs
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ(controller_->creates, 1);
  EXPECT_EQ(controller_->removes, 0)
      << "nothing was left over, so nothing was removed before making it";
  EXPECT_EQ(controller_->parts.at("p42").gcds, 2u);
  EXPECT_EQ(follower.sleeps, 3);
  EXPECT_EQ(controller_->gets, 4 + 1);  // the follower's polls and the leader's read

  for (Node* n : {&leader, &follower}) {
    SCOPED_TRACE(n->name);
    auto rec = n->manager->job(42);
    ASSERT_TRUE(rec.has_value());
    EXPECT_EQ(rec->phase, JobPhase::kReady);
    const std::string dir = n->root + "/ipuof/42";
    for (uint32_t g : {0u, 1u}) {
      const std::string file = dir + "/ipuof-gcd" + std::to_string(g) + ".conf";
      EXPECT_EQ(read(file),
                "{\"partition_id\": \"p42\", \"gcd_index\": " + std::to_string(g) + "}\n");
      struct stat st {};
      ASSERT_EQ(stat(file.c_str(), &st), 0);
      EXPECT_EQ(st.st_mode & 0777, 0600u);
    }
    EXPECT_FALSE(exists(dir + "/ipuof-gcd2.conf"));
    auto env = envOf(*rec);
    EXPECT_EQ(env["IPUOF_CONFIG_PATH"], dir + "/ipuof-gcd0.conf");
    EXPECT_EQ(env["ACCEL_IPUOF_DIR"], dir);
    EXPECT_EQ(env["ACCEL_IPUOF_GCDS"], "2");
    EXPECT_EQ(env["IPUOF_VIPU_API_HOST"], "10.1.2.3");
    EXPECT_EQ(env["IPUOF_VIPU_API_PORT"], "8090");
    EXPECT_EQ(env["IPUOF_VIPU_API_PARTITION_ID"], "p42");
    EXPECT_NE(read(dir + "/accel.env").find("export ACCEL_IPUOF_GCDS='2'\n"), std::string::npos);
  }
}

TEST_F(IpuPartitionStepTest, FollowerGivesUpInTimeNamingTheLeaderAndLeavesNothingNorDrains) {
  Node& follower = node("sbn2");
  auto f = follower.manager->prolog(spec("sbn2", 1));
  ASSERT_FALSE(f.ok());
  // kInvalidArgument: the job fails, this node stays in service.
  EXPECT_EQ(f.error().code(), ErrorCode::kInvalidArgument) << f.error().message();
  EXPECT_NE(f.error().message().find(
                "partition p42 was not made by the job's first node sbn1 within 2 s"),
            std::string::npos)
      << f.error().message();
  // Bounded: polls every 150 ms up to the budget, not a moment longer.
  EXPECT_EQ(std::chrono::nanoseconds(follower.clock.monoNs()), 2000ms);
  EXPECT_EQ(controller_->gets, 2000 / 150 + 2);
  EXPECT_EQ(controller_->creates, 0);
  EXPECT_EQ(controller_->removes, 0) << "a follower never touches the partition, even rolling back";
  EXPECT_FALSE(exists(follower.root + "/ipuof/42"));
  auto rec = follower.manager->job(42);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->phase, JobPhase::kFailed);
  EXPECT_NE(rec->last_error.find("sbn1"), std::string::npos);
  ASSERT_TRUE(follower.manager->epilog(42).ok());
  EXPECT_EQ(controller_->removes, 0);
}

TEST_F(IpuPartitionStepTest, FollowerPollsSoonAtFirstThenBacksOffToTheInterval) {
  Node& follower = node("sbn2");
  follower.first_interval = 10ms;
  start(follower);
  auto f = follower.manager->prolog(spec("sbn2", 1));
  ASSERT_FALSE(f.ok());
  ASSERT_GE(follower.pauses.size(), 8u);
  std::vector<milliseconds> first(follower.pauses.begin(), follower.pauses.begin() + 8);
  EXPECT_EQ(first, (std::vector<milliseconds>{10ms, 15ms, 22ms, 33ms, 49ms, 73ms, 109ms, 150ms}));
  for (size_t i = 7; i + 1 < follower.pauses.size(); ++i) EXPECT_EQ(follower.pauses[i], 150ms) << i;
  EXPECT_EQ(std::chrono::nanoseconds(follower.clock.monoNs()), 2000ms)
      << "still bounded by the budget";
}

// A follower learns how long its leaders take: after a wait of 25 ms its next
// job's first ask comes 18 ms in, not at once; and each wait teaches the
// next, so a leader that has become quick is asked sooner again.
TEST_F(IpuPartitionStepTest, AFollowersFirstAskWaitsThreeQuartersOfItsLastWait) {
  Node& leader = node("sbn1");
  Node& follower = node("sbn2");
  follower.first_interval = 10ms;
  start(follower);
  auto job = [](const std::string& node, uint32_t id) {
    JobRequestSpec s = spec(node, 1);
    s.job_id = id;
    return s;
  };
  auto clock = [&] { return std::chrono::nanoseconds(follower.clock.monoNs()); };
  int sleeps = 0;
  uint32_t leader_job = 0;  // the leader's prolog runs at the follower's second sleep
  follower.on_sleep = [&] {
    if (++sleeps == 2 && leader_job != 0) {
      ASSERT_TRUE(leader.manager->prolog(job("sbn1", leader_job)).ok());
    }
  };

  // Job 42: nothing learned yet: asked at once, after 10 ms, after 15 more (found).
  leader_job = 42;
  ASSERT_TRUE(follower.manager->prolog(job("sbn2", 42)).ok());
  EXPECT_EQ(follower.pauses, (std::vector<milliseconds>{10ms, 15ms}));
  ASSERT_EQ(clock(), 25ms);

  // Job 43: the first ask waits 3/4 of 25 ms, and the leader is done by then.
  follower.pauses.clear();
  sleeps = 1;  // the leader's prolog at this job's first sleep
  leader_job = 43;
  int gets = controller_->gets;
  auto begun = clock();
  ASSERT_TRUE(follower.manager->prolog(job("sbn2", 43)).ok());
  EXPECT_EQ(follower.pauses, (std::vector<milliseconds>{18ms}))
      << "25 * 3 / 4, in whole milliseconds";
  EXPECT_EQ(controller_->gets - gets, 1 + 1) << "the leader's read and the follower's one ask";
  EXPECT_EQ(clock() - begun, 18ms);

  // Job 44: the leader was done before the follower started; 3/4 of 18 ms.
  leader_job = 0;
  ASSERT_TRUE(leader.manager->prolog(job("sbn1", 44)).ok());
  follower.pauses.clear();
  ASSERT_TRUE(follower.manager->prolog(job("sbn2", 44)).ok());
  EXPECT_EQ(follower.pauses, (std::vector<milliseconds>{13ms}));
}

TEST_F(IpuPartitionStepTest, AFollowerThatCannotReachTheControllerFailsAsTheLeaderWould) {
  Node& follower = node("sbn2");
  controller_->get_error = Error(ErrorCode::kUnavailable, "connection refused");
  auto f = follower.manager->prolog(spec("sbn2", 1));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code(), ErrorCode::kUnavailable) << "a node fault, not the job's";
  EXPECT_NE(f.error().message().find("fake vipu"), std::string::npos) << f.error().message();
  EXPECT_EQ(follower.sleeps, 0) << "no waiting on a controller that does not answer";
  EXPECT_EQ(controller_->creates + controller_->removes, 0);
}

TEST_F(IpuPartitionStepTest, OnlyTheLeadersEpilogRemovesThePartition) {
  Node& leader = node("sbn1");
  Node& follower = node("sbn2");
  ASSERT_TRUE(leader.manager->prolog(spec("sbn1", 2)).ok());
  ASSERT_TRUE(follower.manager->prolog(spec("sbn2", 2)).ok());
  const int removes = controller_->removes;
  ASSERT_TRUE(follower.manager->epilog(42).ok());
  EXPECT_EQ(controller_->removes, removes);
  EXPECT_EQ(controller_->parts.count("p42"), 1u);
  EXPECT_FALSE(exists(follower.root + "/ipuof/42"))
      << "the follower's files went with its job directory";
  EXPECT_TRUE(exists(leader.root + "/ipuof/42/ipuof-gcd0.conf"));
  ASSERT_TRUE(leader.manager->epilog(42).ok());
  EXPECT_EQ(controller_->removes, removes + 1);
  EXPECT_EQ(controller_->parts.count("p42"), 0u);
  EXPECT_FALSE(exists(leader.root + "/ipuof/42"));
}

TEST_F(IpuPartitionStepTest, AFollowerFailingAfterThePartitionExistsRollsBackOnlyItsOwnWork) {
  Node& leader = node("sbn1");
  Node& follower = node("sbn2");
  ASSERT_TRUE(leader.manager->prolog(spec("sbn1", 2)).ok());
  follower.fail_after = true;
  const int removes = controller_->removes;
  auto f = follower.manager->prolog(spec("sbn2", 2));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code(), ErrorCode::kIo);
  EXPECT_FALSE(exists(follower.root + "/ipuof/42")) << "its files are gone";
  EXPECT_EQ(controller_->removes, removes) << "the partition is the leader's to remove";
  EXPECT_EQ(controller_->parts.count("p42"), 1u);
  // Slurm runs every node's epilog after a failed prolog; the leader's removes it.
  ASSERT_TRUE(follower.manager->epilog(42).ok());
  ASSERT_TRUE(leader.manager->epilog(42).ok());
  EXPECT_TRUE(controller_->parts.empty());
}

TEST_F(IpuPartitionStepTest, ARestartedFollowerStillKnowsItDoesNotLead) {
  Node& leader = node("sbn1");
  Node& follower = node("sbn2");
  ASSERT_TRUE(leader.manager->prolog(spec("sbn1", 2)).ok());
  ASSERT_TRUE(follower.manager->prolog(spec("sbn2", 2)).ok());
  start(follower);  // the daemon restarts: the job comes back from its record
  auto rec = follower.manager->job(42);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->phase, JobPhase::kReady);
  EXPECT_FALSE(leadsJob(rec->spec));
  const int removes = controller_->removes;
  ASSERT_TRUE(follower.manager->epilog(42).ok());
  EXPECT_EQ(controller_->removes, removes);
  EXPECT_EQ(controller_->parts.count("p42"), 1u);
  start(leader);
  ASSERT_TRUE(leader.manager->epilog(42).ok());
  EXPECT_EQ(controller_->parts.count("p42"), 0u);
}

TEST_F(IpuPartitionStepTest, AJobOnOneNodeIsMadeAsBeforeAndTheGcdCountIsCheckedThere) {
  Node& only = node("sbn1");
  JobRequestSpec s = spec("sbn1", 2);
  s.node_list.clear();  // unknown: as every job was before jobs spanned nodes
  s.node_count = 0;
  // A leftover of an earlier attempt, with other sizes: removed, then made anew.
  ASSERT_TRUE(controller_->create({.name = "p42", .ipus = 8, .gcds = 4, .replicas = 0}).ok());
  auto r = only.manager->prolog(s);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(controller_->creates, 1 + 2)
      << "the test's, then the leader's: refused (the name is taken), made anew";
  EXPECT_EQ(controller_->removes, 1) << "the leftover, found taken by the create";
  EXPECT_EQ(controller_->parts.at("p42").gcds, 2u);
  EXPECT_EQ(controller_->parts.at("p42").ipus, 4u);
  EXPECT_EQ(only.sleeps, 0);
  ASSERT_TRUE(only.manager->epilog(42).ok());
  EXPECT_TRUE(controller_->parts.empty());
}

TEST(JobNodesTest, TheFirstHostOfTheNodeListLeadsAndEveryUncertainCaseLeadsToo) {
  auto spec = [](std::string node, std::string list, uint32_t count) {
    JobRequestSpec s;
    s.node = std::move(node);
    s.node_list = std::move(list);
    s.node_count = count;
    return s;
  };
  EXPECT_TRUE(leadsJob(spec("sbn1", "sbn[1-2]", 2)));
  EXPECT_FALSE(leadsJob(spec("sbn2", "sbn[1-2]", 2)));
  EXPECT_FALSE(leadsJob(spec("sbn2", "sbn[1-2]", 0))) << "the count may be unknown";
  EXPECT_TRUE(leadsJob(spec("gpu07", "gpu[07-09],login1", 4)));
  EXPECT_FALSE(leadsJob(spec("gpu7", "gpu[07-09],login1", 4))) << "names keep their zero padding";
  EXPECT_FALSE(leadsJob(spec("b", "a,b", 2)));
  EXPECT_EQ(jobLeader(spec("b", "a,b", 2)), "a");
  EXPECT_EQ(jobLeader(spec("x", "x[3-5],y", 4)), "x3");
  // Uncertain: lead, as a job on one node must.
  EXPECT_TRUE(leadsJob(spec("sbn2", "", 0)));
  EXPECT_TRUE(leadsJob(spec("sbn2", "sbn[1-2", 2))) << "an unparseable list";
  EXPECT_EQ(jobLeader(spec("sbn2", "sbn[1-2", 2)), "");
  EXPECT_TRUE(leadsJob(spec("", "sbn[1-2]", 2))) << "this node's name unknown";
  EXPECT_TRUE(leadsJob(spec("sbn2", "sbn[1-2]", 1))) << "one node: it is this one";
  EXPECT_TRUE(leadsJob(spec("localhost", "sbn1", 0))) << "a list of one name";
}

TEST(JobNodesTest, TheRecordKeepsTheJobsNodesAndAnOldRecordLoadsAsLedHere) {
  JobRecord r;
  r.spec.job_id = 42;
  r.spec.node = "sbn2";
  r.spec.node_list = "sbn[1-2]";
  r.spec.node_count = 2;
  auto back = decodeRecord(encodeRecord(r));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->spec.node, "sbn2");
  EXPECT_EQ(back->spec.node_list, "sbn[1-2]");
  EXPECT_EQ(back->spec.node_count, 2u);
  EXPECT_FALSE(leadsJob(back->spec));
  // Written before jobs spanned nodes: no such keys.
  auto old = decodeRecord(
      "{\"format\":1,\"job_id\":7,\"uid\":1,\"gid\":1,\"user\":\"u\",\"ipus\":4,\"phase\":"
      "\"ready\","
      "\"ipu_partition\":\"p7\",\"prolog_started_ns\":5}");
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_EQ(old->spec.node, "");
  EXPECT_EQ(old->spec.node_list, "");
  EXPECT_EQ(old->spec.node_count, 0u);
  EXPECT_TRUE(leadsJob(old->spec));
  EXPECT_FALSE(
      decodeRecord("{\"job_id\":1,\"uid\":0,\"gid\":0,\"phase\":\"ready\",\"node_count\":-2}")
          .ok());
  EXPECT_FALSE(
      decodeRecord("{\"job_id\":1,\"uid\":0,\"gid\":0,\"phase\":\"ready\",\"node_list\":3}").ok());
}

}  // namespace
}  // namespace accel::agent
