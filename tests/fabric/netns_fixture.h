#pragma once
// A test fixture whose body runs in a private network namespace: SetUp moves
// the test thread into a new namespace (unshare(CLONE_NEWNET) affects only
// the calling thread, and processes it starts inherit it), makes veth pairs
// there, and TearDown moves the thread back, which frees the namespace and
// everything in it. A gtest environment checks that the host namespace's
// links and addresses are the same after every test as before.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accel/fabric/manager.h"
#include "accel/fabric/netlink_links.h"
#include "temp_dir.h"

namespace accel::fabric::testing {

// Runs a shell command in the calling thread's namespace; its stdout. Fails
// the test when the command fails.
std::string run(const std::string& command);

// `ip -j link`, `ip -j addr` and `ip -j route` of the calling thread's
// namespace as one JSON text, with the address lifetimes (which count down
// by themselves on addresses that have them) removed.
std::string snapshot();

class NetnsTest : public ::testing::Test {
 protected:
  // ipa20's InfiniBand ports, as veth ends; the peers are named p<N>.
  static constexpr const char* kNics[] = {"hsi0", "ibs2f1", "ibp94s0", "ibp218s0"};

  void SetUp() override;
  void TearDown() override;

  // A config for this test's state directory: MTU 9000, range 10.9.0.0/24,
  // route 10.10.0.0/16.
  FabricConfig config() const;
  std::unique_ptr<Links> links();
  std::unique_ptr<FabricManager> manager(const FabricConfig& config);
  std::unique_ptr<FabricManager> manager(const FabricConfig& config, std::unique_ptr<Links> links);
  int ifindex(const std::string& nic);

  support::TempDir tmp_{"fabric-test"};
  std::string tmp_dir_ = tmp_.path();  // removed after the test
  std::string state_dir_;              // tmp_dir_/state, made by the manager
  std::string before_;                 // snapshot() after SetUp

 private:
  int host_netns_ = -1;
};

// A Links that passes every call to the real one, except that before each
// changing call (changeLink, addAddress, addRoute, removeAddress,
// removeRoute; numbered from 1) it asks `hook(n)`: a status in answer is
// reported instead of making the call. Used to inject a failure, a change
// by someone else, or a crash at a chosen call.
class FaultyLinks : public Links {
 public:
  using Hook = std::function<std::optional<Status>(int call)>;
  FaultyLinks(std::unique_ptr<Links> real, Hook hook)
      : real_(std::move(real)), hook_(std::move(hook)) {}

  int changes() const { return changes_; }

  Result<std::optional<LinkInfo>> findLink(const std::string& name) override {
    return real_->findLink(name);
  }
  Status changeLink(int ifindex, const LinkChange& change) override {
    return intercept([&] { return real_->changeLink(ifindex, change); });
  }
  Result<std::vector<AddressEntry>> addresses() override { return real_->addresses(); }
  Status addAddress(int ifindex, const Ipv4Cidr& a) override {
    return intercept([&] { return real_->addAddress(ifindex, a); });
  }
  Status removeAddress(int ifindex, const Ipv4Cidr& a) override {
    return intercept([&] { return real_->removeAddress(ifindex, a); });
  }
  Result<std::vector<RouteEntry>> routes() override { return real_->routes(); }
  Status addRoute(int ifindex, const Ipv4Cidr& d) override {
    return intercept([&] { return real_->addRoute(ifindex, d); });
  }
  Status removeRoute(int ifindex, const Ipv4Cidr& d) override {
    return intercept([&] { return real_->removeRoute(ifindex, d); });
  }

 private:
  template <typename Call>
  Status intercept(Call call) {
    if (auto replaced = hook_(++changes_)) return *replaced;
    return call();
  }
  std::unique_ptr<Links> real_;
  Hook hook_;
  int changes_ = 0;
};

// A hook that fails exactly the calls in `calls` with kIo "injected".
FaultyLinks::Hook failAt(std::vector<int> calls);

}  // namespace accel::fabric::testing
