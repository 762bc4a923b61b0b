// The server's batching over a real ROUTER (CURVE, ipc:// in a temp dir): a
// batch is committed when it is full or when it has been open for
// batch_wait, whichever comes first, and is acknowledged only then.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <zmq.hpp>

#include "server_fixture.h"
#include "temp_dir.h"

namespace accel::aggregator {
namespace {

using namespace std::chrono_literals;

class ServerTest : public test::ServerFixture {
 protected:
  void TearDown() override {
    dealer_.reset();
    ServerFixture::TearDown();
  }
  void start(size_t batch_max, std::chrono::milliseconds batch_wait) {
    std::string ep = "ipc://" + dir_ + "/agg.sock";
    auto s = Server::start({ep, server_keys_, dir_ + "/nodes", 64 * 1024, batch_max, batch_wait},
                           *ingestor_, metrics_);
    ASSERT_TRUE(s.ok()) << s.error().message();
    server_ = std::move(*s);
    dealer_ = dealer(ep, node_keys_);
  }
  void send(uint64_t first, uint64_t last) {
    for (uint64_t q = first; q <= last; ++q)
      dealer_->send(
          zmq::buffer(event::encode({"n1", 1, q, 1, 1}, event::TaskStarted{3, 0, uint32_t(q), 1})));
  }
  // Polls the server for `rounds` rounds of 10 ms; returns the highest
  // sequence number acknowledged so far, stopping early once it is `want`.
  uint64_t pollForAck(uint64_t want, int rounds) {
    uint64_t best = 0;
    for (int i = 0; i < rounds && best < want; ++i) {
      EXPECT_TRUE(server_->poll(10ms).ok());
      zmq::message_t m;
      while (dealer_->recv(m, zmq::recv_flags::dontwait)) {
        auto ack = event::decodeAck({static_cast<const uint8_t*>(m.data()), m.size()});
        if (ack.ok()) best = std::max(best, ack->seq);
      }
    }
    return best;
  }
  size_t stored() { return store_->readEvents({std::nullopt, std::nullopt, 0, 1000})->size(); }

  std::unique_ptr<zmq::socket_t> dealer_;
};

TEST_F(ServerTest, PartialBatchIsCommittedOnceItsWaitIsOver) {
  start(1000, 20ms);
  send(1, 3);
  EXPECT_EQ(pollForAck(3, 1000), 3u);
  EXPECT_EQ(stored(), 3u);
}

// accel_aggregator_nodes_connected follows connections as they open and close.
TEST_F(ServerTest, ConnectionsAreCountedAsTheyOpenAndClose) {
  start(1000, 20ms);
  send(1, 1);
  EXPECT_EQ(pollForAck(1, 1000), 1u);
  EXPECT_EQ(metrics_.connections.load(), 1);
  EXPECT_NE(metrics_.render().find("\naccel_aggregator_nodes_connected 1\n"), std::string::npos)
      << metrics_.render();
  dealer_.reset();
  for (int i = 0; i < 500 && metrics_.connections.load() != 0; ++i)
    ASSERT_TRUE(server_->poll(10ms).ok());
  EXPECT_EQ(metrics_.connections.load(), 0);
}

TEST_F(ServerTest, FullBatchIsCommittedWithoutWaiting) {
  start(4, std::chrono::hours(1));
  send(1, 4);
  EXPECT_EQ(pollForAck(4, 1000), 4u);
  EXPECT_EQ(stored(), 4u);
}

TEST_F(ServerTest, OpenBatchIsNeitherStoredNorAcknowledged) {
  start(1000, std::chrono::hours(1));
  send(1, 3);
  EXPECT_EQ(pollForAck(3, 50), 0u);
  EXPECT_EQ(stored(), 0u);
  EXPECT_EQ(metrics_.events_in, 0u);
}

TEST_F(ServerTest, EveryInterleavedStreamGetsItsAck) {
  // More streams than the server compares each frame with (its recent acks).
  constexpr uint64_t kEpochs = 40, kSeqs = 3;
  start(kEpochs * kSeqs, std::chrono::hours(1));
  for (uint64_t q = 1; q <= kSeqs; ++q)
    for (uint64_t e = 1; e <= kEpochs; ++e)
      dealer_->send(
          zmq::buffer(event::encode({"n1", e, q, 1, 1}, event::TaskStarted{3, 0, uint32_t(q), 1})));
  std::map<uint64_t, uint64_t> acked;  // epoch -> highest seq
  for (int i = 0; i < 1000 && acked.size() < kEpochs; ++i) {
    ASSERT_TRUE(server_->poll(10ms).ok());
    zmq::message_t m;
    while (dealer_->recv(m, zmq::recv_flags::dontwait)) {
      auto ack = event::decodeAck({static_cast<const uint8_t*>(m.data()), m.size()});
      ASSERT_TRUE(ack.ok());
      EXPECT_TRUE(acked.emplace(ack->epoch, ack->seq).second)
          << "second ack for epoch " << ack->epoch;
    }
  }
  ASSERT_EQ(acked.size(), kEpochs);
  for (const auto& [epoch, seq] : acked) EXPECT_EQ(seq, kSeqs) << "epoch " << epoch;
  EXPECT_EQ(stored(), kEpochs * kSeqs);
}

TEST_F(ServerTest, DuplicatesAreAcknowledgedWithWhatIsCommitted) {
  start(2, std::chrono::hours(1));
  send(1, 2);
  ASSERT_EQ(pollForAck(2, 1000), 2u);
  send(1, 2);  // an agent that missed the ack resends
  EXPECT_EQ(pollForAck(2, 1000), 2u);
  EXPECT_EQ(stored(), 2u);
  EXPECT_EQ(metrics_.duplicates, 2u);
}

// Polls until a Nack arrives on `dealer` (or `rounds` of 10 ms pass).
std::optional<event::Nack> pollForNack(Server& server, zmq::socket_t& dealer, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    EXPECT_TRUE(server.poll(10ms).ok());
    zmq::message_t m;
    while (dealer.recv(m, zmq::recv_flags::dontwait)) {
      auto nack = event::decodeNack({static_cast<const uint8_t*>(m.data()), m.size()});
      if (nack.ok()) return *nack;
    }
  }
  return std::nullopt;
}

TEST_F(ServerTest, GarbageGetsANackAndTheNextGoodFrameIsAccepted) {
  start(1000, 5ms);
  send(1, 1);
  std::vector<uint8_t> garbage(300);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = uint8_t(i * 37 + 11);
  dealer_->send(zmq::buffer(garbage));
  auto nack = pollForNack(*server_, *dealer_, 500);
  ASSERT_TRUE(nack);
  EXPECT_EQ(nack->reason, event::NackReason::kUnreadable);
  send(2, 2);
  EXPECT_EQ(pollForAck(2, 1000), 2u);
  EXPECT_EQ(stored(), 2u);
  auto refused = server_->takeRejections();
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].peer, "n1");
}

TEST_F(ServerTest, AllowListIsReloadedOnRequestOnly) {
  start(1, 5ms);
  auto other = *event::generateCurveKeyPair();
  auto connect = [&](const event::CurveKeyPair& k) {
    auto d = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::dealer);
    d->set(zmq::sockopt::linger, 0);
    d->set(zmq::sockopt::curve_serverkey, server_keys_.public_key);
    d->set(zmq::sockopt::curve_publickey, k.public_key);
    d->set(zmq::sockopt::curve_secretkey, k.secret_key);
    d->connect("ipc://" + dir_ + "/agg.sock");
    return d;
  };
  auto acked = [&](zmq::socket_t& d, const std::string& node, uint64_t seq) {
    d.send(zmq::buffer(event::encode({node, 1, seq, 1, 1}, event::AgentStarted{})),
           zmq::send_flags::dontwait);
    for (int i = 0; i < 100; ++i) {
      EXPECT_TRUE(server_->poll(10ms).ok());
      zmq::message_t m;
      while (d.recv(m, zmq::recv_flags::dontwait))
        if (auto a = event::decodeAck({static_cast<const uint8_t*>(m.data()), m.size()});
            a.ok() && a->seq == seq)
          return true;
    }
    return false;
  };
  // Added to the directory: still refused until the list is reloaded.
  std::ofstream(dir_ + "/nodes/n2.pub") << other.public_key << "\n";
  auto before = connect(other);
  EXPECT_FALSE(acked(*before, "n2", 1));
  auto two = server_->reloadAllowList();
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(*two, 2u);
  auto after = connect(other);
  EXPECT_TRUE(acked(*after, "n2", 1));
  // Taken off: the open connection's frames are refused, and so is a new one.
  ASSERT_EQ(::unlink((dir_ + "/nodes/n2.pub").c_str()), 0);
  auto one = server_->reloadAllowList();
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(*one, 1u);
  after->send(zmq::buffer(event::encode({"n2", 1, 2, 1, 1}, event::AgentStarted{})));
  auto nack = pollForNack(*server_, *after, 200);
  ASSERT_TRUE(nack);
  EXPECT_EQ(nack->reason, event::NackReason::kKeyRevoked);
  auto again = connect(other);
  EXPECT_FALSE(acked(*again, "n2", 2));
  // A list that cannot be used keeps the one in force.
  ASSERT_EQ(::chmod((dir_ + "/nodes/n1.pub").c_str(), 0666), 0);
  auto bad = server_->reloadAllowList();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("n1.pub"), std::string::npos) << bad.error().message();
  send(1, 1);
  EXPECT_EQ(pollForAck(1, 500), 1u);
}

TEST(KeyFiles, AllowListAndSecretKeyMustBeTheServiceUsersAndClosed) {
  support::TempDir tmp("accel-keyfiles");
  std::string dir = tmp.path();
  ASSERT_TRUE(makeDirectory(dir + "/nodes", 0755).ok());
  auto keys = *event::generateCurveKeyPair();
  ASSERT_TRUE(event::writeKeyPair(dir + "/agg", keys).ok());
  std::ofstream(dir + "/nodes/n1.pub") << keys.public_key << "\n";
  ASSERT_EQ(::chmod((dir + "/nodes/n1.pub").c_str(), 0644), 0);
  uid_t me = ::geteuid();
  EXPECT_TRUE(loadServerKey(dir + "/agg.key", me).ok());
  EXPECT_EQ(loadAllowList(dir + "/nodes", me).value().node_by_key.size(), 1u);
  // Readable by others: refused, naming the file.
  ASSERT_EQ(::chmod((dir + "/agg.key").c_str(), 0640), 0);
  auto open = loadServerKey(dir + "/agg.key", me);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.error().message().find(dir + "/agg.key"), std::string::npos)
      << open.error().message();
  ASSERT_EQ(::chmod((dir + "/agg.key").c_str(), 0600), 0);
  // Owned by another user than the one the daemon runs as.
  auto stranger = loadServerKey(dir + "/agg.key", me + 1);
  ASSERT_FALSE(stranger.ok());
  EXPECT_NE(stranger.error().message().find("owned by uid"), std::string::npos)
      << stranger.error().message();
  // A node key others may write, or a directory others may write.
  ASSERT_EQ(::chmod((dir + "/nodes/n1.pub").c_str(), 0646), 0);
  auto writable = loadAllowList(dir + "/nodes", me);
  ASSERT_FALSE(writable.ok());
  EXPECT_NE(writable.error().message().find("n1.pub"), std::string::npos);
  ASSERT_EQ(::chmod((dir + "/nodes/n1.pub").c_str(), 0644), 0);
  ASSERT_EQ(::chmod((dir + "/nodes").c_str(), 0777), 0);
  EXPECT_FALSE(loadAllowList(dir + "/nodes", me).ok());
  ASSERT_EQ(::chmod((dir + "/nodes").c_str(), 0755), 0);
  if (me == 0) {  // root may hand the files to someone else
    ASSERT_EQ(::chown((dir + "/nodes/n1.pub").c_str(), 65534, 65534), 0);
    auto foreign = loadAllowList(dir + "/nodes", me);
    ASSERT_FALSE(foreign.ok());
    EXPECT_NE(foreign.error().message().find("owned by uid 65534"), std::string::npos);
  }
}

}  // namespace
}  // namespace accel::aggregator
