// The server's batching over a real ROUTER (CURVE, ipc:// in a temp dir): a
// batch is committed when it is full or when it has been open for
// batch_wait, whichever comes first, and is acknowledged only then.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <zmq.hpp>

#include "accel/aggregator/server.h"
#include "accel/common/safe_file.h"

namespace accel::aggregator {
namespace {

using namespace std::chrono_literals;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/accel-server-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_TRUE(makeDirectory(dir_ + "/nodes", 0755).ok());
    server_keys_ = *event::generateCurveKeyPair();
    node_keys_ = *event::generateCurveKeyPair();
    std::ofstream(dir_ + "/nodes/n1.pub") << node_keys_.public_key << "\n";
    store_ = std::move(Store::open(dir_ + "/events.db", Store::Mode::kReadWrite).value());
    ingestor_ = std::make_unique<Ingestor>(*store_, metrics_, 64 * 1024);
    ASSERT_TRUE(ingestor_->load().ok());
  }
  void TearDown() override {
    dealer_.reset();
    server_.reset();
    (void)removeTree(dir_);
  }
  void start(size_t batch_max, std::chrono::milliseconds batch_wait) {
    std::string ep = "ipc://" + dir_ + "/agg.sock";
    auto s = Server::start({ep, server_keys_, dir_ + "/nodes", 64 * 1024, batch_max, batch_wait}, *ingestor_, metrics_);
    ASSERT_TRUE(s.ok()) << s.error().message();
    server_ = std::move(*s);
    dealer_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::dealer);
    dealer_->set(zmq::sockopt::linger, 0);
    dealer_->set(zmq::sockopt::curve_serverkey, server_keys_.public_key);
    dealer_->set(zmq::sockopt::curve_publickey, node_keys_.public_key);
    dealer_->set(zmq::sockopt::curve_secretkey, node_keys_.secret_key);
    dealer_->connect(ep);
  }
  void send(uint64_t first, uint64_t last) {
    for (uint64_t q = first; q <= last; ++q)
      dealer_->send(zmq::buffer(event::encode({"n1", 1, q, 1, 1}, event::TaskStarted{3, 0, uint32_t(q), 1})));
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

  std::string dir_;
  event::CurveKeyPair server_keys_, node_keys_;
  Metrics metrics_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Ingestor> ingestor_;
  std::unique_ptr<Server> server_;
  zmq::context_t ctx_;
  std::unique_ptr<zmq::socket_t> dealer_;
};

TEST_F(ServerTest, PartialBatchIsCommittedOnceItsWaitIsOver) {
  start(1000, 20ms);
  send(1, 3);
  EXPECT_EQ(pollForAck(3, 1000), 3u);
  EXPECT_EQ(stored(), 3u);
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
      dealer_->send(zmq::buffer(event::encode({"n1", e, q, 1, 1}, event::TaskStarted{3, 0, uint32_t(q), 1})));
  std::map<uint64_t, uint64_t> acked;  // epoch -> highest seq
  for (int i = 0; i < 1000 && acked.size() < kEpochs; ++i) {
    ASSERT_TRUE(server_->poll(10ms).ok());
    zmq::message_t m;
    while (dealer_->recv(m, zmq::recv_flags::dontwait)) {
      auto ack = event::decodeAck({static_cast<const uint8_t*>(m.data()), m.size()});
      ASSERT_TRUE(ack.ok());
      EXPECT_TRUE(acked.emplace(ack->epoch, ack->seq).second) << "second ack for epoch " << ack->epoch;
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

}  // namespace
}  // namespace accel::aggregator
