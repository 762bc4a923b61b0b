#include "accel/ipc/control_socket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "accel/common/safe_file.h"
#include "temp_dir.h"

namespace accel::ipc {
namespace {

using namespace std::chrono_literals;

class ControlSocketTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = dir_ + "/control.sock"; }
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }

  // Serves one request: replies with the request reversed.
  std::thread serveOnce(const Socket& listener) {
    return std::thread([&listener] {
      for (int i = 0; i < 500; ++i) {
        auto conn = acceptControl(listener);
        if (!conn.ok()) {
          std::this_thread::sleep_for(2ms);
          continue;
        }
        auto msg = recvMessage(*conn, 1s);
        if (!msg.ok()) return;
        std::vector<uint8_t> rev(msg->rbegin(), msg->rend());
        (void)sendMessage(*conn, rev.data(), rev.size(), 1s);
        return;
      }
    });
  }

  support::TempDir tmp_{"accel-ipc"};
  std::string dir_ = tmp_.path();
  std::string path_;
};

TEST_F(ControlSocketTest, RoundTripAndPeerCredentials) {
  auto l = listenControl(path_, 0666);
  ASSERT_TRUE(l.ok()) << l.error().message();
  struct stat st {};
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  auto client = connectControl(path_);
  ASSERT_TRUE(client.ok());
  auto server = acceptControl(*l);
  ASSERT_TRUE(server.ok());
  auto cred = peerCred(*server);
  ASSERT_TRUE(cred.ok());
  EXPECT_EQ(cred->uid, geteuid());
  EXPECT_EQ(cred->pid, getpid());
  const uint8_t hello[] = {1, 2, 3};
  ASSERT_TRUE(sendMessage(*client, hello, 3, 1s).ok());
  auto got = recvMessage(*server, 1s);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, std::vector<uint8_t>({1, 2, 3}));
}

TEST_F(ControlSocketTest, CallDoesAWholeRoundTrip) {
  auto l = listenControl(path_, 0600);
  ASSERT_TRUE(l.ok());
  auto t = serveOnce(*l);
  const uint8_t msg[] = {'a', 'b', 'c'};
  auto reply = call(path_, msg, 3, 2s);
  t.join();
  ASSERT_TRUE(reply.ok()) << reply.error().message();
  EXPECT_EQ(std::string(reply->begin(), reply->end()), "cba");
}

TEST_F(ControlSocketTest, OversizeMessageIsRefusedWhole) {
  auto l = listenControl(path_, 0600);
  ASSERT_TRUE(l.ok());
  auto client = connectControl(path_);
  ASSERT_TRUE(client.ok());
  auto server = acceptControl(*l);
  ASSERT_TRUE(server.ok());
  int size = 256 * 1024;
  setsockopt(client->fd(), SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  std::vector<uint8_t> big(kMaxMessageBytes + 100, 7);
  // Bypass sendMessage's own cap to play a hostile client.
  ASSERT_EQ(::send(client->fd(), big.data(), big.size(), 0), static_cast<ssize_t>(big.size()));
  auto got = recvMessage(*server, 1s);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message().find("exceeds"), std::string::npos);
}

TEST_F(ControlSocketTest, SilentClientTimesOut) {
  auto l = listenControl(path_, 0600);
  ASSERT_TRUE(l.ok());
  auto client = connectControl(path_);
  ASSERT_TRUE(client.ok());
  auto server = acceptControl(*l);
  ASSERT_TRUE(server.ok());
  auto got = recvMessage(*server, 50ms);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code(), ErrorCode::kTimeout);
}

TEST_F(ControlSocketTest, NobodyListeningIsUnavailable) {
  auto c = connectControl(path_);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), ErrorCode::kUnavailable);
}

TEST_F(ControlSocketTest, StaleSocketIsReplaced) {
  {
    auto first = listenControl(path_, 0600);
    ASSERT_TRUE(first.ok());
  }
  // The first listener is closed; its file remains, like after a crash.
  auto second = listenControl(path_, 0600);
  ASSERT_TRUE(second.ok()) << second.error().message();
}

TEST_F(ControlSocketTest, SymlinkOrFileAtPathIsRefusedAndKept) {
  const std::string target = dir_ + "/target";
  ASSERT_TRUE(writeFileAtomic(target, "precious", 0600).ok());
  ASSERT_EQ(symlink(target.c_str(), path_.c_str()), 0);
  auto l = listenControl(path_, 0600);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().code(), ErrorCode::kConflict);
  EXPECT_EQ(*readFileNoFollow(target), "precious");
  struct stat st {};
  ASSERT_EQ(lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

}  // namespace
}  // namespace accel::ipc
