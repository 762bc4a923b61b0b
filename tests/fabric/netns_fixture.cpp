#include "netns_fixture.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "accel/common/safe_file.h"

namespace accel::fabric::testing {
namespace {

using json = nlohmann::json;

// The host namespace's links and addresses before the first test and after
// the last one must be equal: nothing here may touch the host.
class HostUnchanged : public ::testing::Environment {
 public:
  void SetUp() override { host_ = hostView(); }
  void TearDown() override {
    EXPECT_EQ(hostView(), host_) << "the host network namespace changed during the fabric tests";
  }

 private:
  static std::string hostView() { return run("ip -j link") + run("ip -j addr"); }
  std::string host_;
};

const auto* const kHostCheck = ::testing::AddGlobalTestEnvironment(new HostUnchanged);

json withoutLifetimes(json addresses) {
  for (auto& link : addresses) {
    if (!link.contains("addr_info")) continue;
    for (auto& info : link["addr_info"]) {
      info.erase("valid_life_time");
      info.erase("preferred_life_time");
    }
  }
  return addresses;
}

}  // namespace

std::string run(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << command << ": " << std::strerror(errno);
    return "";
  }
  std::string out;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ADD_FAILURE() << "'" << command << "' failed (status " << status << ")";
  }
  return out;
}

std::string snapshot() {
  json view;
  view["link"] = json::parse(run("ip -j link"));
  view["addr"] = withoutLifetimes(json::parse(run("ip -j addr")));
  view["route"] = json::parse(run("ip -j route show table all"));
  return view.dump(1);
}

FaultyLinks::Hook failAt(std::vector<int> calls) {
  return [calls](int call) -> std::optional<Status> {
    if (std::find(calls.begin(), calls.end(), call) == calls.end()) return std::nullopt;
    return Status(Error(ErrorCode::kIo, "injected failure at call " + std::to_string(call)));
  };
}

void NetnsTest::SetUp() {
  ASSERT_EQ(geteuid(), 0u) << "the fabric tests need root (CAP_NET_ADMIN) to make private "
                              "network namespaces; run them as root (ctest -L fabric)";
  state_dir_ = tmp_dir_ + "/state";
  host_netns_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(host_netns_, 0) << std::strerror(errno);
  // Only this thread (and the processes it starts) moves.
  ASSERT_EQ(unshare(CLONE_NEWNET), 0) << "unshare(CLONE_NEWNET): " << std::strerror(errno);
  for (size_t i = 0; i < std::size(kNics); ++i) {
    const std::string nic = kNics[i];
    const std::string peer = "p" + std::to_string(i);
    run("ip link add " + nic + " type veth peer name " + peer);
    // The kernel gives a link its default qdisc on its first "up" and keeps
    // it; a fabric NIC on a real node has been up before, so these have too.
    run("ip link set " + nic + " up && ip link set " + nic + " down");
  }
  before_ = snapshot();
}

void NetnsTest::TearDown() {
  if (host_netns_ >= 0) {
    // Leaving drops the last reference: the namespace and its veths go.
    EXPECT_EQ(setns(host_netns_, CLONE_NEWNET), 0) << std::strerror(errno);
    ::close(host_netns_);
  }
  EXPECT_TRUE(tmp_.remove());
}

FabricConfig NetnsTest::config() const {
  FabricConfig c;
  c.mtu = 9000;
  c.address_range = "10.9.0.0/24";
  c.routes = {"10.10.0.0/16"};
  c.state_dir = state_dir_;
  return c;
}

std::unique_ptr<Links> NetnsTest::links() {
  auto opened = NetlinkLinks::open();
  EXPECT_TRUE(opened.ok()) << opened.error().message();
  return opened.ok() ? std::move(*opened) : nullptr;
}

std::unique_ptr<FabricManager> NetnsTest::manager(const FabricConfig& c) {
  return manager(c, links());
}

std::unique_ptr<FabricManager> NetnsTest::manager(const FabricConfig& c, std::unique_ptr<Links> l) {
  auto opened = FabricManager::open(c, std::move(l));
  EXPECT_TRUE(opened.ok()) << opened.error().message();
  return opened.ok() ? std::move(*opened) : nullptr;
}

int NetnsTest::ifindex(const std::string& nic) {
  auto link = links()->findLink(nic);
  EXPECT_TRUE(link.ok() && *link) << nic;
  return link.ok() && *link ? (*link)->ifindex : 0;
}

}  // namespace accel::fabric::testing
