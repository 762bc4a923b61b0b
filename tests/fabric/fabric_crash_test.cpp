// Crashes: a child process sets up (or tears down) a job and is killed
// right before a chosen change; a new manager on the same state directory
// must then tear the job down to exactly the namespace the test began with.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netns_fixture.h"

namespace accel::fabric::testing {
namespace {

constexpr int kSetUpChanges = 6;     // two NICs: link, address, route each
constexpr int kTearDownChanges = 6;  // two addresses; per NIC a route and a link change

// Runs `body` in a child (same namespace: it forks from this thread) whose
// Links kill it with SIGKILL before change number `crash_at`. True when the
// child died that way.
bool crashedAt(NetnsTest* test, int crash_at,
               const std::function<void(std::unique_ptr<Links>)>& body) {
  (void)test;
  pid_t pid = fork();
  if (pid == 0) {
    auto real = NetlinkLinks::open();
    if (!real.ok()) _exit(2);
    body(std::make_unique<FaultyLinks>(std::move(*real), [crash_at](int call) {
      if (call == crash_at) raise(SIGKILL);
      return std::optional<Status>();
    }));
    _exit(3);  // no crash: the change count is wrong
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

TEST_F(NetnsTest, CrashDuringSetUp) {
  const FabricConfig c = config();
  for (int crash_at = 1; crash_at <= kSetUpChanges; ++crash_at) {
    SCOPED_TRACE("crash before change " + std::to_string(crash_at));
    ASSERT_TRUE(crashedAt(this, crash_at, [&](std::unique_ptr<Links> l) {
      auto m = FabricManager::open(c, std::move(l));
      if (m.ok()) (void)(*m)->setUp(42, {"hsi0", "ibs2f1"});
    }));
    auto m = manager(c);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->jobs(), std::vector<uint32_t>{42});
    ASSERT_TRUE(m->tearDown(42).ok());
    EXPECT_EQ(snapshot(), before_);
  }
}

TEST_F(NetnsTest, CrashDuringTearDown) {
  const FabricConfig c = config();
  for (int crash_at = 1; crash_at <= kTearDownChanges; ++crash_at) {
    SCOPED_TRACE("crash before teardown change " + std::to_string(crash_at));
    ASSERT_TRUE(manager(c)->setUp(42, {"hsi0", "ibs2f1"}).ok());
    ASSERT_TRUE(crashedAt(this, crash_at, [&](std::unique_ptr<Links> l) {
      auto m = FabricManager::open(c, std::move(l));
      if (m.ok()) (void)(*m)->tearDown(42);
    }));
    auto m = manager(c);
    ASSERT_NE(m, nullptr);
    ASSERT_TRUE(m->tearDown(42).ok());
    EXPECT_EQ(snapshot(), before_);
  }
}

}  // namespace
}  // namespace accel::fabric::testing
