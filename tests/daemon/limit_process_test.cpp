// Appliance time limits enforced by the real daemon on real processes: the
// job's tasks are children of the test, reported with the same control
// requests spank_accel.so sends from slurmstepd. Time bounds are generous;
// the precise delays are measured by bench/limit_bench.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "accel/common/proc_stat.h"
#include "accel/ipc/control_socket.h"
#include "accel/schemas/control_generated.h"
#include "process_harness.h"

namespace accel::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A fake task: on the warning signal it writes one byte to `warned_fd`;
// with `ignore_term` it survives SIGTERM and only SIGKILL ends it.
pid_t spawnTask(int warned_fd, bool ignore_term) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  static int fd;  // for the handler; the child is single-threaded
  fd = warned_fd;
  struct sigaction sa {};
  sa.sa_handler = [](int) { (void)!write(fd, "w", 1); };
  sigaction(SIGUSR1, &sa, nullptr);
  if (ignore_term) signal(SIGTERM, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // gtest's threads may have blocked some
  for (;;) pause();
}

// Waits up to `limit` for the child to end; its wait status, or -1.
int waitEnd(pid_t pid, std::chrono::milliseconds limit) {
  auto until = Clock::now() + limit;
  do {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(5ms);
  } while (Clock::now() < until);
  return -1;
}

// Bytes that arrived on `fd` within `limit`.
int readWarnings(int fd, int want, std::chrono::milliseconds limit) {
  int got = 0;
  auto until = Clock::now() + limit;
  while (got < want && Clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 0))) <= 0) continue;
    char buf[16];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) got += static_cast<int>(n);
  }
  return got;
}

// In a launcher's child: the appliance counts an appliance job for the Slurm
// job only when the job's user submitted it, and the fake takes the submitter
// from the real uid. So the launcher runs for the jobs' user (4242), keeping
// root's effective uid to reach the test's private state directory.
void submitAsJobUser() {
  if (setresuid(4242, 0, 0) != 0) _exit(126);
}

class LimitProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "these tests play slurmd and slurmstepd: run them as root";
    ASSERT_EQ(pipe2(warn_pipe_, O_CLOEXEC | O_NONBLOCK), 0);
    h_.writeConfig("ApplianceKillGrace=1\n");
  }
  void TearDown() override {
    for (pid_t p : children_) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
    close(warn_pipe_[0]);
    close(warn_pipe_[1]);
  }
  void startOrFail() { ASSERT_TRUE(h_.start()) << h_.startError(); }

  // Prolog of a GPU job with an appliance limit: its steps count.
  void prolog(uint32_t job, int64_t limit_sec, int signal = 0, uint32_t lead = 0) {
    auto env = AgentHarness::jobEnv(job, 4242, "0");
    env["SPANK_ACCEL_APPLIANCE_TIME"] = std::to_string(limit_sec);
    if (signal > 0) {
      env["SPANK_ACCEL_APPLIANCE_SIGNAL"] = std::to_string(signal);
      env["SPANK_ACCEL_APPLIANCE_SIGNAL_LEAD"] = std::to_string(lead);
    }
    auto r = h_.ctl({"prolog"}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  pid_t task(bool ignore_term) {
    pid_t p = spawnTask(warn_pipe_[1], ignore_term);
    children_.push_back(p);
    return p;
  }
  void send(flatbuffers::FlatBufferBuilder& fbb) {
    auto reply = ipc::call(h_.socketPath(), fbb.GetBufferPointer(), fbb.GetSize(), 2s);
    ASSERT_TRUE(reply.ok()) << reply.error().message();
    EXPECT_EQ(flatbuffers::GetRoot<control::Reply>(reply->data())->outcome(), control::Outcome::Ok);
  }
  void reportTask(uint32_t job, uint32_t step, pid_t pid, uint64_t ticks = 0) {
    if (ticks == 0) {
      auto t = readStartTicks(pid);
      ASSERT_TRUE(t.ok());
      ticks = *t;
    }
    flatbuffers::FlatBufferBuilder fbb;
    auto body =
        control::CreateTaskRequest(fbb, job, step, pid, ticks, control::TaskEventKind::Started, 0);
    fbb.Finish(control::CreateRequest(fbb, 1, control::RequestBody::TaskRequest, body.Union()),
               control::RequestIdentifier());
    send(fbb);
  }
  void reportStep(uint32_t job, uint32_t step, bool started) {
    flatbuffers::FlatBufferBuilder fbb;
    auto kind = started ? control::StepEventKind::Started : control::StepEventKind::Ended;
    fbb.Finish(control::CreateRequest(fbb, 1, control::RequestBody::StepRequest,
                                      control::CreateStepRequest(fbb, job, step, kind, 0).Union()),
               control::RequestIdentifier());
    send(fbb);
  }
  static double since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  }

  AgentHarness h_{
      HarnessPaths{ACCEL_AGENTD, ACCEL_ACCELCTL, ACCEL_HW_MOCK_DIR "/topologies/ipa20.xml"}};
  int warn_pipe_[2] = {-1, -1};
  std::vector<pid_t> children_;
};

TEST_F(LimitProcessTest, WarnsThenTerminatesAndKillsWhatIgnoresTerm) {
  startOrFail();
  prolog(2001, 2, SIGUSR1, 1);
  pid_t polite = task(false), stubborn = task(true);
  pid_t stranger = task(true);
  reportStep(2001, 0, true);
  auto t0 = Clock::now();
  reportTask(2001, 0, polite);
  reportTask(2001, 0, stubborn);
  // Same pid, another start time: a process that reused a task's pid.
  reportTask(2001, 0, stranger, 12345);
  EXPECT_EQ(readWarnings(warn_pipe_[0], 2, 4000ms), 2);
  double warned = since(t0);
  EXPECT_GT(warned, 0.7) << "the warning comes 1 s before the 2 s limit";
  int st = waitEnd(polite, 4000ms);
  ASSERT_NE(st, -1) << "SIGTERM never came";
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) << st;
  EXPECT_GT(since(t0), 1.7);
  EXPECT_EQ(waitEnd(stubborn, 500ms), -1) << "killed before the grace was over";
  st = waitEnd(stubborn, 4000ms);
  ASSERT_NE(st, -1) << "SIGKILL never came";
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << st;
  EXPECT_EQ(waitEnd(stranger, 300ms), -1) << "a process with another start time was signalled";
  EXPECT_EQ(readWarnings(warn_pipe_[0], 1, 100ms), 0) << "the stranger was warned";
  EXPECT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(2001, 4242, "0")).exit_code, 0);
}

TEST_F(LimitProcessTest, TimeBetweenStepsDoesNotCount) {
  startOrFail();
  prolog(2002, 2);
  pid_t t = task(false);
  reportStep(2002, 0, true);
  reportTask(2002, 0, t);
  std::this_thread::sleep_for(1200ms);
  reportStep(2002, 0, false);
  std::this_thread::sleep_for(2000ms);  // idle: 0.8 s of budget left
  EXPECT_EQ(waitEnd(t, 10ms), -1) << "idle time was charged";
  reportStep(2002, 1, true);
  reportTask(2002, 1, t);
  auto t1 = Clock::now();
  int st = waitEnd(t, 4000ms);
  ASSERT_NE(st, -1) << "never enforced";
  EXPECT_GT(since(t1), 0.5);
  EXPECT_LT(since(t1), 3.0);
}

TEST_F(LimitProcessTest, RestartMidJobKeepsTheBudget) {
  startOrFail();
  prolog(2003, 3);
  pid_t t = task(false);
  reportStep(2003, 0, true);
  auto t0 = Clock::now();
  reportTask(2003, 0, t);
  // Killed 2 s into a 3 s budget and down for 0.3 s: a kept budget ends the
  // task about 3 s after it started; a reset one could not before 5.3 s. The
  // gap leaves room for a slow (sanitized, loaded) restart.
  std::this_thread::sleep_for(2000ms);
  h_.kill9();
  std::this_thread::sleep_for(300ms);
  startOrFail();
  int st = waitEnd(t, 6000ms);
  ASSERT_NE(st, -1) << "the restarted daemon lost the deadline";
  EXPECT_GT(since(t0), 2.7) << "the restart reset nothing forward";
  EXPECT_LT(since(t0), 5.0) << "the restart reset the budget";
}

TEST_F(LimitProcessTest, DeadlinePassedWhileTheDaemonWasDownIsEnforcedAtOnce) {
  startOrFail();
  prolog(2004, 1);
  pid_t t = task(false);
  reportStep(2004, 0, true);
  reportTask(2004, 0, t);
  h_.kill9();
  std::this_thread::sleep_for(2000ms);
  EXPECT_EQ(waitEnd(t, 10ms), -1);
  auto t1 = Clock::now();
  startOrFail();
  ASSERT_NE(waitEnd(t, 3000ms), -1) << "the overdue limit was not enforced";
  EXPECT_LT(since(t1), 2.0);
}

// The appliance side: queue time does not count, and at the limit the agent
// cancels the appliance job through the appliance client. The launcher is
// not reported as a task, so only the agent's cancel can end it early.
TEST_F(LimitProcessTest, ApplianceJobIsChargedFromItsStartAndCancelledAtTheLimit) {
  const std::string state = h_.dir() + "/mock-state";
  ::setenv("ACCEL_HW_MOCK_STATE", state.c_str(), 1);  // inherited by the daemon and the launcher
  h_.writeConfig("ApplianceKillGrace=1\nAppliancePollInterval=1\nHwMockDir=" ACCEL_HW_MOCK_BUILD
                 "\n");
  startOrFail();
  auto env = AgentHarness::jobEnv(2005, 4242);
  env["SPANK_ACCEL_APPLIANCE_TIME"] = "1";
  ASSERT_EQ(h_.ctl({"prolog"}, env).exit_code, 0);
  pid_t t = task(false);
  reportStep(2005, 0, true);
  reportTask(2005, 0, t);
  auto t0 = Clock::now();
  pid_t launcher = fork();
  if (launcher == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    submitAsJobUser();
    execl(ACCEL_HW_MOCK_BUILD "/bin/fake-appliance-job", "fake-appliance-job", "--csx", "1",
          "--queue-seconds", "2", "--run-seconds", "30", "--label", "slurm-job-id=2005",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  children_.push_back(launcher);
  int st = waitEnd(launcher, 8000ms);
  double ended = since(t0);
  ::unsetenv("ACCEL_HW_MOCK_STATE");
  ASSERT_NE(st, -1) << "the appliance job was never cancelled";
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2)
      << "fake-appliance-job exits 2 when cancelled: " << st;
  EXPECT_GT(ended, 2.7) << "queue time was charged";
  EXPECT_LT(ended, 5.0);
  ASSERT_NE(waitEnd(t, 2000ms), -1) << "the task was not terminated";
}

// The waiter of a surrogate step is spared SIGTERM at the limit: the agent
// cancels its appliance job, which ends it with exit 1, so that its step
// reads FAILED (a signalled step reads CANCELLED). SIGKILL after the grace
// still reaches it when it is left.
TEST_F(LimitProcessTest, SurrogateWaiterIsSparedSigtermButNotSigkill) {
  const std::string state = h_.dir() + "/mock-state";
  ::setenv("ACCEL_HW_MOCK_STATE", state.c_str(), 1);
  h_.writeConfig(
      "ApplianceKillGrace=1\nAppliancePollInterval=1\nSurrogateSteps="
      "no\nHwMockDir=" ACCEL_HW_MOCK_BUILD "\n");
  startOrFail();
  auto env = AgentHarness::jobEnv(2006, 4242);
  env["SPANK_ACCEL_APPLIANCE_TIME"] = "4";  // time for the reports below
  ASSERT_EQ(h_.ctl({"prolog"}, env).exit_code, 0);
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  pid_t launcher = fork();
  if (launcher == 0) {
    dup2(out[1], 1);
    submitAsJobUser();
    execl(ACCEL_HW_MOCK_BUILD "/bin/fake-appliance-job", "fake-appliance-job", "--csx", "1",
          "--queue-seconds", "0", "--run-seconds", "30", "--label", "slurm-job-id=2006",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  children_.push_back(launcher);
  char id[64] = {};
  ASSERT_GT(read(out[0], id, sizeof id - 1), 0);
  close(out[0]);
  std::string appliance_job(id, strcspn(id, "\n"));
  // The daemon accepts the report once its watcher has seen the appliance job.
  bool reported = false;
  for (int i = 0; i < 50 && !reported; ++i) {
    flatbuffers::FlatBufferBuilder fbb;
    auto body = control::CreateSurrogateRequestDirect(fbb, 2006, 5, appliance_job.c_str());
    fbb.Finish(control::CreateRequest(fbb, 1, control::RequestBody::SurrogateRequest, body.Union()),
               control::RequestIdentifier());
    auto reply = ipc::call(h_.socketPath(), fbb.GetBufferPointer(), fbb.GetSize(), 2s);
    reported = reply.ok() && flatbuffers::GetRoot<control::Reply>(reply->data())->outcome() ==
                                 control::Outcome::Ok;
    if (!reported) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(reported) << "the surrogate step of " << appliance_job << " was never accepted";
  pid_t user_task = task(false), waiter = task(false);
  reportStep(2006, 0, true);
  reportTask(2006, 0, user_task);
  reportTask(2006, 5, waiter);
  int st = waitEnd(user_task, 8000ms);
  ::unsetenv("ACCEL_HW_MOCK_STATE");
  ASSERT_NE(st, -1) << "the limit was never enforced";
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) << st;
  EXPECT_EQ(waitEnd(waiter, 300ms), -1) << "the waiter got SIGTERM";
  st = waitEnd(waiter, 4000ms);
  ASSERT_NE(st, -1) << "the waiter was left after the grace";
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << st;
  st = waitEnd(launcher, 4000ms);
  EXPECT_TRUE(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 2)
      << "the appliance job was not cancelled: " << st;
}

}  // namespace
}  // namespace accel::testing
