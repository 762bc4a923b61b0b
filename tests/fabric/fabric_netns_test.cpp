// Set-up and teardown on veth pairs in a private namespace, read back with
// `ip -j`: what a job gets, what stays while another job shares a NIC, and
// that the namespace ends exactly as it began.
#include <set>
#include <thread>

#include "netns_fixture.h"

namespace accel::fabric::testing {
namespace {

using Jobs = std::vector<uint32_t>;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST_F(NetnsTest, SetUpThenTearDownLeavesTheNamespaceAsItWas) {
  auto m = manager(config());
  ASSERT_NE(m, nullptr);
  auto job = m->setUp(42, {"hsi0", "ibs2f1"});
  ASSERT_TRUE(job.ok()) << job.error().message();
  ASSERT_EQ(job->nics.size(), 2u);
  EXPECT_EQ(job->nics[0].nic, "hsi0");
  EXPECT_EQ(formatCidr(*job->nics[0].address), "10.9.0.43/24");
  EXPECT_EQ(formatCidr(*job->nics[1].address), "10.9.0.44/24");
  EXPECT_EQ(job->mtu, 9000u);
  // What the kernel says, not what the library says.
  const std::string link = run("ip -j link show hsi0");
  EXPECT_TRUE(contains(link, "\"mtu\":9000")) << link;
  EXPECT_TRUE(contains(link, "\"UP\"")) << link;
  EXPECT_TRUE(contains(run("ip -j addr show ibs2f1"), "\"local\":\"10.9.0.44\",\"prefixlen\":24"));
  const std::string routes = run("ip route show 10.10.0.0/16");
  EXPECT_TRUE(contains(routes, "dev hsi0")) << routes;
  EXPECT_TRUE(contains(routes, "dev ibs2f1")) << routes;
  EXPECT_EQ(run("cat /proc/sys/net/ipv4/conf/hsi0/promote_secondaries"), "1\n");
  EXPECT_EQ(m->jobs(), Jobs{42});
  ASSERT_TRUE(m->tearDown(42).ok());
  EXPECT_EQ(snapshot(), before_);
  EXPECT_TRUE(m->jobs().empty());
  EXPECT_TRUE(m->usage().empty());
}

TEST_F(NetnsTest, SharedNicIsRestoredOnlyAfterTheLastJob) {
  auto m = manager(config());
  ASSERT_NE(m, nullptr);
  auto first = m->setUp(1, {"hsi0"});
  auto second = m->setUp(2, {"hsi0", "ibp94s0"});
  ASSERT_TRUE(first.ok()) << first.error().message();
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_EQ(formatCidr(*first->nics[0].address), "10.9.0.2/24");
  EXPECT_EQ(formatCidr(*second->nics[0].address), "10.9.0.3/24");
  auto usage = m->usage();
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[0].nic, "hsi0");
  EXPECT_EQ(usage[0].jobs, (Jobs{1, 2}));
  EXPECT_EQ(usage[0].original_mtu, 1500u);
  // Job 1 holds the primary address of the subnet on hsi0; removing it must
  // not take job 2's secondary address with it.
  ASSERT_TRUE(m->tearDown(1).ok());
  const std::string addr = run("ip -j addr show hsi0");
  EXPECT_FALSE(contains(addr, "10.9.0.2\"")) << addr;
  EXPECT_TRUE(contains(addr, "10.9.0.3\"")) << addr;
  EXPECT_TRUE(contains(run("ip -j link show hsi0"), "\"mtu\":9000"));
  EXPECT_TRUE(contains(run("ip route show 10.10.0.0/16"), "dev hsi0"));
  EXPECT_EQ(m->usage()[0].jobs, Jobs{2});
  ASSERT_TRUE(m->tearDown(2).ok());
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, NewManagerTearsDownFromTheLedger) {
  auto first = manager(config());
  ASSERT_NE(first, nullptr);
  auto job = first->setUp(42, {"hsi0", "ibp218s0"});
  ASSERT_TRUE(job.ok()) << job.error().message();
  first.reset();  // the daemon goes away; the kernel state stays
  auto second = manager(config());
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->jobs(), Jobs{42});
  auto adopted = second->job(42);
  ASSERT_TRUE(adopted.has_value());
  EXPECT_EQ(adopted->nics[1].nic, "ibp218s0");
  EXPECT_EQ(adopted->nics[1].address, job->nics[1].address);
  ASSERT_TRUE(second->tearDown(42).ok());
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, TeardownIsIdempotent) {
  auto m = manager(config());
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->tearDown(999).ok());  // never set up
  ASSERT_TRUE(m->setUp(42, {"hsi0"}).ok());
  EXPECT_TRUE(m->tearDown(42).ok());
  EXPECT_TRUE(m->tearDown(42).ok());
  EXPECT_TRUE(m->tearDown(999).ok());
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, RetriedSetUpStartsOver) {
  auto m = manager(config());
  ASSERT_NE(m, nullptr);
  auto once = m->setUp(42, {"hsi0"});
  auto twice = m->setUp(42, {"hsi0"});
  ASSERT_TRUE(once.ok() && twice.ok());
  EXPECT_EQ(once->nics[0].address, twice->nics[0].address);
  const std::string addr = run("ip -j addr show hsi0");
  EXPECT_EQ(addr.find("10.9.0.43"), addr.rfind("10.9.0.43")) << addr;
  ASSERT_TRUE(m->tearDown(42).ok());
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, WhatWasThereBeforeStays) {
  // hsi0 already up at MTU 9000 with an address of its own and the route;
  // someone holds 10.9.0.43 on another link.
  run("ip link set hsi0 mtu 9000 up && ip addr add 192.168.7.1/24 dev hsi0 && "
      "ip route add 10.10.0.0/16 dev hsi0 && ip addr add 10.9.0.43/24 dev ibp94s0");
  const std::string before = snapshot();
  auto m = manager(config());
  ASSERT_NE(m, nullptr);
  auto job = m->setUp(42, {"hsi0"});
  ASSERT_TRUE(job.ok()) << job.error().message();
  EXPECT_EQ(formatCidr(*job->nics[0].address), "10.9.0.44/24");  // .43 is taken
  ASSERT_TRUE(m->tearDown(42).ok());
  EXPECT_EQ(snapshot(), before);
}

TEST_F(NetnsTest, ConcurrentJobsGetDistinctAddresses) {
  auto m = manager(config());
  ASSERT_NE(m, nullptr);
  constexpr uint32_t kJobs = 8;
  std::vector<Result<JobFabric>> results(kJobs, Error(ErrorCode::kInternal, "not run"));
  std::vector<std::thread> threads;
  // Jobs 100 and 101 would start at neighbouring slots; every job wants two.
  for (uint32_t i = 0; i < kJobs; ++i) {
    threads.emplace_back([&, i] { results[i] = m->setUp(100 + i, {"hsi0", "ibs2f1"}); });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> seen;
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.error().message();
    for (const auto& n : r->nics) EXPECT_TRUE(seen.insert(formatCidr(*n.address)).second);
  }
  EXPECT_EQ(seen.size(), 2 * kJobs);
  threads.clear();
  std::vector<Status> down(kJobs);
  for (uint32_t i = 0; i < kJobs; ++i) {
    threads.emplace_back([&, i] { down[i] = m->tearDown(100 + i); });
  }
  for (auto& t : threads) t.join();
  for (const auto& s : down) EXPECT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(snapshot(), before_);
}

TEST_F(NetnsTest, StateDirectoryHasOneManager) {
  auto m = manager(config());
  ASSERT_NE(m, nullptr);
  auto other = FabricManager::open(config(), links());
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code(), ErrorCode::kConflict);
  EXPECT_EQ(other.error().message(),
            "fabric: " + state_dir_ + " is in use by another fabric manager");
}

TEST_F(NetnsTest, NoAddressRangeNoMtu) {
  FabricConfig c = config();
  c.address_range.clear();
  c.mtu = 0;
  c.routes.clear();
  auto m = manager(c);
  ASSERT_NE(m, nullptr);
  auto job = m->setUp(5, {"hsi0"});
  ASSERT_TRUE(job.ok()) << job.error().message();
  EXPECT_FALSE(job->nics[0].address.has_value());
  EXPECT_TRUE(contains(run("ip -j link show hsi0"), "\"mtu\":1500"));
  EXPECT_TRUE(contains(run("ip -j link show hsi0"), "\"UP\""));
  ASSERT_TRUE(m->tearDown(5).ok());
  EXPECT_EQ(snapshot(), before_);
}

}  // namespace
}  // namespace accel::fabric::testing
