#include "accel/exec/client_process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <thread>

#include "temp_dir.h"

namespace accel::exec {
namespace {

using namespace std::chrono_literals;

ClientResult run(std::vector<std::string> argv, std::chrono::milliseconds timeout = 5000ms) {
  ClientCall call;
  call.argv = std::move(argv);
  call.timeout = timeout;
  auto r = runClient(call);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : ClientResult{};
}

// True when `pid` no longer runs (gone, or a zombie waiting for init).
bool gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z';
}

TEST(ClientProcess, CapturesOutputAndExitCode) {
  auto r = run({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.succeeded());
  EXPECT_EQ(r.describe(), "exit 3: err");
}

TEST(ClientProcess, FindsProgramsInPathAndPassesEnvironment) {
  ClientCall call;
  call.argv = {"sh", "-c", "echo \"$ACCEL_TEST_VALUE\""};
  call.env = {{"ACCEL_TEST_VALUE", "from the caller"}};
  auto r = runClient(call);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->succeeded());
  EXPECT_EQ(r->out, "from the caller\n");
}

TEST(ClientProcess, MissingProgramIsNotFound) {
  ClientCall call;
  call.argv = {"/nonexistent/accel-client"};
  auto r = runClient(call);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(r.error().message().find("/nonexistent/accel-client"), std::string::npos);
}

TEST(ClientProcess, EmptyCommandIsRefused) {
  ClientCall call;
  EXPECT_FALSE(runClient(call).ok());
}

TEST(ClientProcess, HangingClientIsKilledAtTheDeadline) {
  auto start = std::chrono::steady_clock::now();
  auto r = run({"/bin/sh", "-c", "echo started; exec sleep 30"}, 300ms);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.succeeded());
  EXPECT_EQ(r.out, "started\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(r.describe(), "timed out: started");
}

TEST(ClientProcess, HelperLeftBehindIsKilledAndDoesNotHoldTheCall) {
  support::TempDir tmp("accel-exec");
  std::string pidfile = tmp.file("pid");
  auto start = std::chrono::steady_clock::now();
  // The helper inherits stdout, so a reader waiting for end of file would hang.
  auto r = run({"/bin/sh", "-c", "sleep 30 & echo $! > " + pidfile + "; echo done"}, 20000ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_TRUE(r.succeeded()) << r.describe();
  EXPECT_EQ(r.out, "done\n");
  std::ifstream in(pidfile);
  pid_t helper = 0;
  in >> helper;
  ASSERT_GT(helper, 0);
  for (int i = 0; i < 100 && !gone(helper); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(gone(helper)) << "helper " << helper << " still runs";
}

TEST(ClientProcess, OutputIsCapped) {
  ClientCall call;
  call.argv = {"/bin/sh", "-c", "head -c 200000 /dev/zero"};
  call.max_output = 1000;
  auto r = runClient(call);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->succeeded()) << r->describe();
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->out.size(), 1000u);
}

TEST(ClientProcess, ReportsTheSignalThatEndedTheClient) {
  auto r = run({"/bin/sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(r.term_signal, SIGTERM);
  EXPECT_FALSE(r.succeeded());
  EXPECT_EQ(r.describe(), "killed by signal 15");
}

TEST(ClientProcess, ClientSeesNoBlockedSignalsEvenIfTheCallerBlocksThem) {
  sigset_t all, old;
  sigfillset(&all);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &all, &old), 0);
  auto r = run({"/bin/sh", "-c", "grep SigBlk /proc/self/status"});
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  EXPECT_EQ(r.out, "SigBlk:\t0000000000000000\n");
}

// A vendor client sees none of the daemon's environment but a fixed PATH,
// LC_ALL, HOME, the names passed on purpose and the call's own variables.
TEST(ClientProcess, VendorClientGetsACleanEnvironment) {
  ::setenv("ACCEL_TEST_SECRET_OF_DAEMON", "leaked", 1);
  ::setenv("ACCEL_TEST_PASSED", "passed on", 1);
  ::setenv("LD_PRELOAD", "/nonexistent/evil.so", 1);
  setPassedEnvironment({"ACCEL_TEST_PASSED"});
  ClientCall call;
  call.argv = {"/usr/bin/env"};
  call.env = {{"ACCEL_TEST_VALUE", "mine"}};
  auto r = runClient(call);
  ::unsetenv("LD_PRELOAD");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out.find("ACCEL_TEST_SECRET_OF_DAEMON"), std::string::npos) << r->out;
  EXPECT_EQ(r->out.find("LD_PRELOAD"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("ACCEL_TEST_PASSED=passed on\n"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("ACCEL_TEST_VALUE=mine\n"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("LC_ALL=C\n"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"),
            std::string::npos)
      << r->out;

  // The daemon's own programs keep everything.
  call.inherit_environment = true;
  auto whole = runClient(call);
  ASSERT_TRUE(whole.ok());
  EXPECT_NE(whole->out.find("ACCEL_TEST_SECRET_OF_DAEMON=leaked"), std::string::npos);
  setPassedEnvironment({});
  ::unsetenv("ACCEL_TEST_SECRET_OF_DAEMON");
  ::unsetenv("ACCEL_TEST_PASSED");
}

// What a vendor client says reaches users in job output and summaries:
// no terminal escapes, no secrets, bounded.
TEST(ClientProcess, DescriptionIsSanitizedForUsers) {
  ClientCall call;
  call.argv = {"/bin/sh", "-c",
               "printf 'denied for key s3cr3t-KEY \\033[2J\\007 bye\\n' >&2; exit 1"};
  call.secrets = {"s3cr3t-KEY", ""};
  auto r = runClient(call);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->describe(), "exit 1: denied for key *** ?[2J? bye");
  std::string long_line(1000, 'x');
  EXPECT_EQ(sanitizeForUsers(long_line, {}).size(), 303u);
  EXPECT_EQ(sanitizeForUsers("\xc3\xa9t\xc3\xa9\x7f", {}), "??t???");
  EXPECT_EQ(sanitizeForUsers("aKEYbKEYKEY", {"KEY"}), "a***b******");
}

}  // namespace
}  // namespace accel::exec
