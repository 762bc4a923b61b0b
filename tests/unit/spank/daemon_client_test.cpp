#include "accel/spank/daemon_client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "accel/ipc/control_requests.h"
#include "accel/ipc/control_socket.h"
#include "accel/schemas/control_generated.h"

namespace accel::spank {
namespace {

namespace fb = accel::control;
using namespace std::chrono_literals;

// A one-shot stand-in for accel-agentd on a socket in a temp dir: accepts one
// connection (or `connections`, one after another), reads one request from
// each, and answers with whatever `answer` builds.
class OneShotServer {
 public:
  using Answer = std::function<std::vector<std::uint8_t>(const std::vector<std::uint8_t>&)>;

  explicit OneShotServer(Answer answer, int connections = 1) : connections_(connections) {
    dir_ = std::filesystem::temp_directory_path() / ("spank-cli-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "control.sock").string();
    auto l = ipc::listenControl(path_, 0666);
    EXPECT_TRUE(l.ok());
    listener_ = std::move(*l);
    thread_ = std::thread([this, answer] { serve(answer); });
  }
  ~OneShotServer() {
    thread_.join();
    std::filesystem::remove_all(dir_);
  }
  const std::string& path() const { return path_; }
  const std::vector<std::uint8_t>& received() const { return received_; }

 private:
  void serve(const Answer& answer) {
    for (int i = 0, served = 0; i < 200 && served < connections_; ++i) {
      auto conn = ipc::acceptControl(listener_);
      if (!conn.ok()) {
        std::this_thread::sleep_for(10ms);
        continue;
      }
      ++served;
      auto req = ipc::recvMessage(*conn, 2s);
      if (!req.ok()) return;
      received_ = *req;
      auto reply = answer(*req);
      if (!reply.empty())
        (void)ipc::sendMessage(*conn, reply.data(), reply.size(), 2s);
      else
        std::this_thread::sleep_for(600ms);  // say nothing: the client times out
    }
  }

  int connections_;
  std::filesystem::path dir_;
  std::string path_;
  ipc::Socket listener_;
  std::thread thread_;
  std::vector<std::uint8_t> received_;
};

std::vector<std::uint8_t> readyReply(const std::vector<std::uint8_t>&) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::EnvVar>> env{
      fb::CreateEnvVarDirect(fbb, "ACCEL_JOB_DIR", "/run/j/7")};
  auto info =
      fb::CreateJobInfoDirect(fbb, 7, 1001, "u", fb::JobState::Ready, nullptr, "/run/j/7", &env);
  fbb.Finish(fb::CreateReplyDirect(fbb, fb::Outcome::Ok, "", fb::ReplyBody::JobInfo, info.Union()));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

TEST(CallDaemon, RoundTrip) {
  OneShotServer server(readyReply);
  auto r = callDaemon(server.path(), ipc::encodeJobRequest(7), 2s);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->outcome, Outcome::kOk);
  ASSERT_TRUE(r->job);
  EXPECT_EQ(r->job->env.at(0).second, "/run/j/7");
}

// The agent counts places per user; the job's own user may hold its share
// with other connections. Busy is tried again within the bound.
TEST(CallDaemon, BusyIsTriedAgainWithinTheBound) {
  int calls = 0;
  OneShotServer server(
      [&calls](const std::vector<std::uint8_t>& req) {
        if (++calls < 3) {
          flatbuffers::FlatBufferBuilder fbb;
          fbb.Finish(fb::CreateReplyDirect(fbb, fb::Outcome::Busy,
                                           "refused: this user already has 4 requests"));
          return std::vector<std::uint8_t>(fbb.GetBufferPointer(),
                                           fbb.GetBufferPointer() + fbb.GetSize());
        }
        return readyReply(req);
      },
      3);
  auto r = callDaemon(server.path(), ipc::encodeJobRequest(7), 2s);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->outcome, Outcome::kOk);
  EXPECT_EQ(calls, 3);
}

// An agent that stays Busy: tried again and again, but never past the bound.
TEST(CallDaemon, BusyIsTriedNoLongerThanTheBound) {
  std::atomic<int> calls{0};
  OneShotServer server(
      [&calls](const std::vector<std::uint8_t>&) {
        ++calls;
        flatbuffers::FlatBufferBuilder fbb;
        fbb.Finish(fb::CreateReplyDirect(fbb, fb::Outcome::Busy, "accel-agentd is busy"));
        return std::vector<std::uint8_t>(fbb.GetBufferPointer(),
                                         fbb.GetBufferPointer() + fbb.GetSize());
      },
      1000);
  auto start = std::chrono::steady_clock::now();
  auto r = callDaemon(server.path(), ipc::encodeJobRequest(7), 300ms);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(calls.load(), 2);
  EXPECT_LT(took, 1s);
  // The last try's answer: Busy, or a time-out when the bound ran out while it waited.
  if (r.ok())
    EXPECT_EQ(r->outcome, Outcome::kBusy);
  else
    EXPECT_EQ(r.error().code(), ErrorCode::kTimeout) << r.error().message();
}

TEST(CallDaemon, NobodyListening) {
  auto r = callDaemon("/nonexistent/accel-test/control.sock", ipc::encodeJobRequest(7), 1s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kUnavailable);
}

TEST(CallDaemon, SilentDaemonTimesOut) {
  OneShotServer server(
      [](const std::vector<std::uint8_t>&) { return std::vector<std::uint8_t>{}; });
  auto start = std::chrono::steady_clock::now();
  auto r = callDaemon(server.path(), ipc::encodeJobRequest(7), 200ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(CallDaemon, GarbageReplyIsRefused) {
  OneShotServer server(
      [](const std::vector<std::uint8_t>&) { return std::vector<std::uint8_t>(32, 0xee); });
  auto r = callDaemon(server.path(), ipc::encodeJobRequest(7), 2s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::kParse);
}

}  // namespace
}  // namespace accel::spank
