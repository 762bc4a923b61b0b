// The control socket's places, counted per uid: root's hooks are served
// whatever an ordinary user does to the public socket; a user holds at most
// its share of connections, an idle one is closed quickly, and a user that
// connects too fast is refused. Whole processes: the real daemon, accelctl,
// and users played by child processes that drop to their uid.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "accel/ipc/control_socket.h"
#include "accel/schemas/control_generated.h"
#include "flood.h"
#include "process_harness.h"

namespace accel::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr uid_t kUser = 65534;  // nobody

std::vector<uint8_t> statusRequest() {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(control::CreateRequest(fbb, 1, control::RequestBody::StatusRequest,
                                    control::CreateStatusRequest(fbb).Union()),
             control::RequestIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

// A child process as `uid`: `fn` reports a line of text, then the child
// keeps what it holds until finish().
class UserChild {
 public:
  UserChild(uid_t uid, const std::function<std::string()>& fn) {
    int out[2], go[2];
    if (pipe(out) != 0 || pipe(go) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(out[0]);
      close(go[1]);
      if (setgid(uid) != 0 || setuid(uid) != 0) _exit(126);
      std::string text = fn() + "\nEND\n";
      (void)!write(out[1], text.data(), text.size());
      char c;
      (void)!read(go[0], &c, 1);  // until finish() closes it
      _exit(0);
    }
    close(out[1]);
    close(go[0]);
    out_ = out[0];
    go_ = go[1];
  }
  ~UserChild() { finish(); }

  // What fn returned.
  std::string report() {
    std::string text;
    char buf[4096];
    while (text.find("\nEND\n") == std::string::npos) {
      ssize_t n = read(out_, buf, sizeof buf);
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
    }
    return text.substr(0, text.find("\nEND\n"));
  }
  void finish() {
    if (pid_ <= 0) return;
    close(go_);
    close(out_);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  int go_ = -1;
};

// Runs `fn` in a child process as `uid` and returns the text it returned.
std::string asUser(uid_t uid, const std::function<std::string()>& fn) {
  UserChild child(uid, fn);
  return child.report();
}

// "busy <message>" for a Busy answer waiting on `conn`, "open" when nothing
// is there, "closed" when the agent closed it unanswered.
std::string stateOf(const ipc::Socket& conn) {
  auto msg = ipc::recvMessage(conn, 0ms);
  if (msg.ok()) {
    const auto* r = flatbuffers::GetRoot<control::Reply>(msg->data());
    return std::string(control::EnumNameOutcome(r->outcome())) + " " +
           (r->message() ? r->message()->str() : "");
  }
  return msg.error().code() == ErrorCode::kTimeout ? "open" : "closed";
}

class SocketLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "these tests play root and ordinary users: run them as root";
  }
  void start(const std::string& config) {
    h_.writeConfig(config);
    ASSERT_TRUE(h_.start()) << h_.startError();
  }
  AgentHarness h_{
      HarnessPaths{ACCEL_AGENTD, ACCEL_ACCELCTL, ACCEL_HW_MOCK_DIR "/topologies/ipa20.xml"}};
};

TEST_F(SocketLimitsTest, RootsHooksAllSucceedWhileAUserFloodsThePublicSocket) {
  start("");
  Flood flood(h_.socketPath(), kUser, 1000);
  ASSERT_TRUE(flood.running());
  std::this_thread::sleep_for(300ms);  // the flood in full swing
  int failed = 0;
  std::string errors;
  for (uint32_t job = 7000; job < 7030; ++job) {
    auto p = h_.ctl({"prolog"}, AgentHarness::jobEnv(job, 4242, "1"));
    auto e = h_.ctl({"epilog"}, AgentHarness::jobEnv(job, 4242, "1"));
    if (p.exit_code != 0 || e.exit_code != 0) {
      ++failed;
      errors += p.err + e.err;
    }
  }
  const FloodCounts c = flood.stop();
  EXPECT_EQ(failed, 0) << errors;
  EXPECT_GT(c.connects, 1000u) << "the flood did not flood";
  EXPECT_GT(c.answered_busy + c.closed_silently, 0u)
      << "the agent held every connection of the user";
  EXPECT_TRUE(h_.running());
  EXPECT_EQ(h_.ctl({"status"}).exit_code, 0);
  EXPECT_NE(h_.daemonLog().find("control: refused a connection of uid 65534"), std::string::npos)
      << "refusals are logged:\n"
      << h_.daemonLog();
}

TEST_F(SocketLimitsTest, AUserHoldsAtMostItsConnectionsAndRootIsServedMeanwhile) {
  start("ControlUserConnections=3\nControlUserIdleMs=2000\n");
  UserChild user(kUser, [&] {
    static std::vector<ipc::Socket> held;  // the child's, kept until it ends
    for (int i = 0; i < 10; ++i) {
      auto c = ipc::connectControl(h_.socketPath());
      if (c.ok()) held.push_back(std::move(*c));
    }
    std::this_thread::sleep_for(300ms);
    std::string s;
    for (const auto& c : held) s += stateOf(c) + "\n";
    return s;
  });
  std::string states = user.report();
  // The user still holds its three: root's request goes through.
  auto root = h_.ctl({"status"});
  EXPECT_EQ(root.exit_code, 0) << "root was not served while the user held its cap: " << root.err;
  user.finish();
  size_t open = 0, busy = 0, at = 0;
  for (size_t nl; (nl = states.find('\n', at)) != std::string::npos; at = nl + 1) {
    const std::string line = states.substr(at, nl - at);
    if (line == "open") ++open;
    if (line.rfind("Busy ", 0) == 0 && line.find("ControlUserConnections") != std::string::npos)
      ++busy;
  }
  EXPECT_EQ(open, 3u) << states;
  EXPECT_EQ(busy, 7u) << states;
}

TEST_F(SocketLimitsTest, AnIdleUserConnectionIsClosedQuicklyAndRootsIsNot) {
  start("ControlUserIdleMs=100\n");
  std::string took = asUser(kUser, [&] {
    auto c = ipc::connectControl(h_.socketPath());
    if (!c.ok()) return std::string("connect: ") + c.error().message();
    const auto t0 = Clock::now();
    auto msg = ipc::recvMessage(*c, 5s);
    if (msg.ok() || msg.error().code() == ErrorCode::kTimeout) return std::string("not closed");
    return std::to_string(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count());
  });
  ASSERT_TRUE(!took.empty() && std::isdigit(static_cast<unsigned char>(took[0]))) << took;
  EXPECT_GE(std::stoi(took), 80) << "closed before its time";
  EXPECT_LT(std::stoi(took), 1000) << "an idle user connection was held " << took << " ms";
  // Root's connection waits its 2 s.
  auto root = ipc::connectControl(h_.socketPath());
  ASSERT_TRUE(root.ok());
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(stateOf(*root), "open");
  auto req = statusRequest();
  ASSERT_TRUE(ipc::sendMessage(*root, req.data(), req.size(), 1s).ok());
  auto reply = ipc::recvMessage(*root, 2s);
  ASSERT_TRUE(reply.ok()) << reply.error().message();
  EXPECT_EQ(flatbuffers::GetRoot<control::Reply>(reply->data())->outcome(), control::Outcome::Ok);
}

TEST_F(SocketLimitsTest, AUserConnectingFasterThanItsRateIsRefused) {
  start("ControlUserRate=5\n");  // bursts of 10
  std::string counts = asUser(kUser, [&] {
    auto req = statusRequest();
    int ok = 0, rate = 0, busy = 0;
    std::string other;  // any other answer, for the failure message
    const auto begun = std::chrono::steady_clock::now();
    for (int i = 0; i < 30; ++i) {
      auto r = ipc::call(h_.socketPath(), req.data(), req.size(), 2s);
      if (!r.ok()) {
        other += "; call " + std::to_string(i) + ": " + r.error().message();
        continue;
      }
      const auto* reply = flatbuffers::GetRoot<control::Reply>(r->data());
      if (reply->outcome() == control::Outcome::Ok) {
        ++ok;
      } else if (reply->outcome() == control::Outcome::Busy && reply->message() &&
                 reply->message()->str().find("ControlUserRate") != std::string::npos) {
        ++rate;
      } else {
        // Busy for another reason (on a loaded machine the pool's workers
        // may all be at work) is counted; anything else is named.
        if (reply->outcome() == control::Outcome::Busy) ++busy;
        other += "; call " + std::to_string(i) + ": " +
                 (reply->message() ? reply->message()->str() : "?");
      }
    }
    auto took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - begun);
    return std::to_string(ok) + " " + std::to_string(rate) + " " + std::to_string(busy) + " " +
           std::to_string(took_ms.count()) + other;
  });
  int ok = -1, rate = -1, busy = -1, took_ms = -1;
  ASSERT_GE(std::sscanf(counts.c_str(), "%d %d %d %d", &ok, &rate, &busy, &took_ms), 4) << counts;
  EXPECT_GE(ok, 10) << "the burst is served";
  // The burst, and the tokens the rate gave back while the calls went on (5 a
  // second, one more for the partial one): on a busy machine 30 calls may
  // take most of a second.
  EXPECT_LE(ok, 10 + took_ms * 5 / 1000 + 1) << "30 calls in " << took_ms << " ms";
  EXPECT_GT(rate, 0) << "some are refused for the rate: " << counts;
  EXPECT_LE(busy, 2) << "Busy for a reason other than the rate: " << counts;
  EXPECT_EQ(ok + rate + busy, 30) << "the rest are refused for the rate: " << counts;
  // Root is not rate-limited.
  for (int i = 0; i < 30; ++i) ASSERT_EQ(h_.ctl({"status"}).exit_code, 0) << "root's call " << i;
}

// accelctl, told Busy, tries again within its time budget: a user past its
// rate gets its answer once the rate allows it.
TEST_F(SocketLimitsTest, AccelctlTriesABusyAgentAgainWithinItsBudget) {
  start("ControlUserRate=1\n");                     // bursts of 2
  for (const char* f : {"/ctl.out", "/ctl.err"}) {  // the user's accelctl writes them
    std::string path = h_.dir() + f;
    close(open(path.c_str(), O_WRONLY | O_CREAT, 0666));
    chmod(path.c_str(), 0666);
  }
  std::string out = asUser(kUser, [&] {
    auto req = statusRequest();
    std::string spent;
    for (int i = 0; i < 3; ++i) {
      auto r = ipc::call(h_.socketPath(), req.data(), req.size(), 2s);
      spent +=
          r.ok()
              ? control::EnumNameOutcome(flatbuffers::GetRoot<control::Reply>(r->data())->outcome())
              : "error";
      spent += ",";
    }
    const auto t0 = Clock::now();
    auto r = h_.ctl({"status"}, {}, kUser);
    return std::to_string(r.exit_code) + " " +
           std::to_string(
               std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count()) +
           " " + spent + " " + r.err;
  });
  int code = -1, ms = -1;
  ASSERT_EQ(std::sscanf(out.c_str(), "%d %d", &code, &ms), 2) << out;
  EXPECT_NE(out.find("Ok,Ok,Busy,"), std::string::npos)
      << "the burst was not spent as planned: " << out;
  EXPECT_EQ(code, 0) << out;
  EXPECT_GE(ms, 300) << "answered before the rate allowed it: " << out;
}

// The admin socket: only root and SlurmUser can connect, and root's hooks use
// it, so they work with the public socket gone altogether.
TEST_F(SocketLimitsTest, TheAdminSocketIsRootsAndTheHooksUseIt) {
  start("");
  const std::string admin = h_.dir() + "/control-admin.sock";
  struct stat st {};
  ASSERT_EQ(stat(admin.c_str(), &st), 0) << admin;
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string user = asUser(kUser, [&] {
    auto c = ipc::connectControl(admin);
    return c.ok() ? std::string("connected") : c.error().message();
  });
  EXPECT_NE(user.find("Permission denied"), std::string::npos) << user;
  ASSERT_EQ(unlink(h_.socketPath().c_str()), 0);
  EXPECT_EQ(h_.ctl({"prolog"}, AgentHarness::jobEnv(7100, 4242)).exit_code, 0);
  EXPECT_EQ(h_.ctl({"epilog"}, AgentHarness::jobEnv(7100, 4242)).exit_code, 0);
  EXPECT_NE(h_.ctl({"status"}, {}, kUser).exit_code, 0) << "users have only the public socket";
}

}  // namespace
}  // namespace accel::testing
