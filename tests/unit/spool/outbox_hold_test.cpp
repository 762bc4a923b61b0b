// Lifecycle events the spool cannot take are held in memory, in order, and
// appended (with their sequence numbers given then) once there is room; a
// fake aggregator (ROUTER + CURVE, acks on demand) frees that room.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "accel/common/safe_file.h"
#include "accel/events/codec.h"
#include "accel/events/curve_keys.h"
#include "accel/events/outbox.h"
#include "temp_dir.h"

namespace accel::event {
namespace {

using namespace std::chrono_literals;

// Takes envelopes in sequence order as the aggregator does (duplicates and
// gaps are not taken) and, once acking() is set, acknowledges what it took.
class FakeAggregator {
 public:
  FakeAggregator(const std::string& endpoint, const CurveKeyPair& keys) {
    sock_.set(zmq::sockopt::linger, 0);
    sock_.set(zmq::sockopt::curve_server, 1);
    sock_.set(zmq::sockopt::curve_secretkey, keys.secret_key);
    sock_.bind(endpoint);
    thread_ = std::thread([this] { run(); });
  }
  ~FakeAggregator() {
    stop_ = true;
    thread_.join();
  }
  void ack() { acking_ = true; }
  std::vector<uint32_t> taskIds() {  // of the envelopes taken, in sequence order
    std::lock_guard lock(mu_);
    return tasks_;
  }

 private:
  void run() {
    uint64_t epoch = 0, last = 0;
    std::string peer;
    while (!stop_) {
      zmq::pollitem_t item{sock_.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 20ms);
      zmq::message_t id, payload;
      while (sock_.recv(id, zmq::recv_flags::dontwait)) {
        (void)sock_.recv(payload, zmq::recv_flags::none);
        peer = id.to_string();
        auto env = decode({static_cast<const uint8_t*>(payload.data()), payload.size()});
        if (!env.ok() || env->header.seq != last + 1) continue;
        epoch = env->header.epoch, last = env->header.seq;
        const auto* task = env->event ? std::get_if<TaskStarted>(&*env->event) : nullptr;
        std::lock_guard lock(mu_);
        tasks_.push_back(task ? task->task_id : 0);
      }
      if (acking_ && last > 0) {
        auto ack = encodeAck({epoch, last});
        sock_.send(zmq::buffer(peer), zmq::send_flags::sndmore);
        sock_.send(zmq::buffer(ack));
      }
    }
  }

  zmq::context_t ctx_{1};
  zmq::socket_t sock_{ctx_, zmq::socket_type::router};
  std::atomic<bool> stop_{false}, acking_{false};
  std::mutex mu_;
  std::vector<uint32_t> tasks_;
  std::thread thread_;
};

class OutboxHoldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    o_.node = "n1";
    o_.spool_dir = root_ + "/spool";
    o_.spool_max_bytes = 128 * 1024;  // the smallest spool: some 800 task events
    o_.held_retry = 20ms;
  }
  void TearDown() override { (void)tmp_.remove(); }

  support::TempDir tmp_{"accel-outbox-hold"};
  std::string root_ = tmp_.path();
  OutboxOptions o_;
};

TEST_F(OutboxHoldTest, LifecycleEventsPastTheSpoolBoundAreHeldAndArriveInOrderAfterAcks) {
  auto server = *generateCurveKeyPair();
  o_.endpoint = "ipc://" + root_ + "/agg.sock";
  o_.server_public_key = server.public_key;
  o_.client_keys = *generateCurveKeyPair();
  FakeAggregator agg(o_.endpoint, server);
  auto box = Outbox::start(o_);
  ASSERT_TRUE(box.ok()) << box.error().message();
  constexpr uint32_t kEvents = 3000;
  for (uint32_t i = 1; i <= kEvents; ++i)
    ASSERT_TRUE((*box)->publish(TaskStarted{1, 0, i, 1}).ok()) << i;
  auto s = (*box)->stats();
  EXPECT_GT(s.held, 0u);
  EXPECT_EQ(s.held + s.published, kEvents);
  EXPECT_EQ(s.held_total, s.held);
  EXPECT_EQ(s.dropped_lifecycle, 0u);
  EXPECT_NE(describe(s).find("held " + std::to_string(s.held) + " lifecycle"), std::string::npos)
      << describe(s);
  ASSERT_TRUE((*box)->publish(NodeHeartbeat{8, 1, "", 0, 0}).ok());  // never overtakes a held event
  EXPECT_EQ((*box)->stats().dropped_telemetry, 1u);

  agg.ack();  // from here on only acks and the retry thread move the held events
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (agg.taskIds().size() < kEvents && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  auto ids = agg.taskIds();
  ASSERT_EQ(ids.size(), kEvents);
  for (uint32_t seq = 1; seq <= kEvents; ++seq)
    ASSERT_EQ(ids[seq - 1], seq) << "sequence number " << seq;
  s = (*box)->stats();
  EXPECT_EQ(s.held, 0u);
  EXPECT_EQ(s.held_bytes, 0u);
  EXPECT_EQ(s.published, kEvents);
  EXPECT_EQ(s.dropped_lifecycle, 0u);
}

TEST_F(OutboxHoldTest, BeyondTheHoldsBoundEventsAreLostAndSoAreTheHeldAtShutdown) {
  o_.held_max_events = 10;
  auto box = Outbox::start(o_);  // no endpoint: nothing is ever acknowledged
  ASSERT_TRUE(box.ok()) << box.error().message();
  Status last = okStatus();
  uint32_t i = 0;
  while (last.ok() && i < 5000) last = (*box)->publish(TaskStarted{1, 0, ++i, 1});
  ASSERT_FALSE(last.ok());
  EXPECT_EQ(last.error().code(), ErrorCode::kUnavailable);
  auto s = (*box)->stats();
  EXPECT_EQ(s.held, 10u);
  EXPECT_EQ(s.dropped_lifecycle, 1u);
  EXPECT_EQ(s.published + s.held + 1, i);
  EXPECT_EQ(s.backlog, s.published);

  s = (*box)->shutdown();
  EXPECT_EQ(s.held, 0u);
  EXPECT_EQ(s.lost_at_shutdown, 10u);
  EXPECT_EQ(s.dropped_lifecycle, 11u);
  EXPECT_NE(describe(s).find("10 held lifecycle lost at shutdown"), std::string::npos)
      << describe(s);
  EXPECT_FALSE((*box)->publish(TaskStarted{1, 0, 1, 1}).ok());
  const uint64_t published = s.published;
  box->reset();
  auto again = Outbox::start(o_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->stats().recovered, published);
}

}  // namespace
}  // namespace accel::event
