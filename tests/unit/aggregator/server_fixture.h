#pragma once
// What the tests of the aggregator's sockets share: a temporary directory
// whose allow list (nodes/) holds node n1's key, the server's keys, a store
// with its ingestor, and CURVE dealers to the server's endpoints. Subclasses
// close their sockets in TearDown before calling this one's, which stops the
// server and removes the directory. QueryServerFixture adds the query socket.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "accel/aggregator/server.h"
#include "accel/common/safe_file.h"
#include "fake_run_checks.h"
#include "temp_dir.h"

namespace accel::aggregator::test {

class ServerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(makeDirectory(dir_ + "/nodes", 0755).ok());
    server_keys_ = *event::generateCurveKeyPair();
    node_keys_ = *event::generateCurveKeyPair();
    std::ofstream(dir_ + "/nodes/n1.pub") << node_keys_.public_key << "\n";
    store_ = std::move(Store::open(dir_ + "/events.db", Store::Mode::kReadWrite).value());
    ingestor_ =
        std::make_unique<Ingestor>(*store_, metrics_, 64 * 1024, kDefaultSummaryWait, &runs_);
    ASSERT_TRUE(ingestor_->load().ok());
  }
  void TearDown() override {
    server_.reset();
    (void)tmp_.remove();
  }
  // A DEALER to `endpoint` that authenticates with `keys`.
  std::unique_ptr<zmq::socket_t> dealer(const std::string& endpoint,
                                        const event::CurveKeyPair& keys) {
    auto d = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::dealer);
    d->set(zmq::sockopt::linger, 0);
    d->set(zmq::sockopt::curve_serverkey, server_keys_.public_key);
    d->set(zmq::sockopt::curve_publickey, keys.public_key);
    d->set(zmq::sockopt::curve_secretkey, keys.secret_key);
    d->connect(endpoint);
    return d;
  }

  support::TempDir tmp_{"accel-server-test"};
  std::string dir_ = tmp_.path();
  event::CurveKeyPair server_keys_, node_keys_;
  Metrics metrics_;
  FakeRunChecks runs_;  // slurmctld: the test hands out its answers
  std::unique_ptr<Store> store_;
  std::unique_ptr<Ingestor> ingestor_;
  std::unique_ptr<Server> server_;
  zmq::context_t ctx_;
};

// A server with its query socket (events.db beside it), a node's DEALER to
// send events on (events_) and one to ask on (asker_), and record(), which
// sends one event of n1 and polls the server until it is acknowledged.
class QueryServerFixture : public ServerFixture {
 protected:
  void TearDown() override {
    events_.reset();
    asker_.reset();
    ServerFixture::TearDown();
  }
  // `hold`: how long a held ask waits for its job's next event.
  void startWithQueries(std::chrono::milliseconds hold = std::chrono::seconds(20)) {
    const std::string ep = "ipc://" + dir_ + "/agg.sock", query = "ipc://" + dir_ + "/query.sock";
    ServerOptions o{ep,        server_keys_, dir_ + "/nodes",
                    64 * 1024, 1000,         std::chrono::milliseconds(1)};
    o.query_listen = query;
    o.database = dir_ + "/events.db";
    o.query_hold = hold;
    auto s = Server::start(o, *ingestor_, metrics_);
    ASSERT_TRUE(s.ok()) << s.error().message();
    server_ = std::move(*s);
    events_ = dealer(ep, node_keys_);
    asker_ = dealer(query, node_keys_);
  }
  void record(const event::Event& e) {
    ++seq_;
    events_->send(zmq::buffer(
        event::encode({"n1", 1, seq_, 1'700'000'000'000'000'000 + int64_t(seq_), 1}, e)));
    for (int i = 0; i < 500; ++i) {
      ASSERT_TRUE(server_->poll(std::chrono::milliseconds(5)).ok());
      zmq::message_t m;
      while (events_->recv(m, zmq::recv_flags::dontwait)) {
        auto ack = event::decodeAck({static_cast<const uint8_t*>(m.data()), m.size()});
        if (ack.ok() && ack->seq == seq_) return;
      }
    }
    FAIL() << "event " << seq_ << " not acknowledged";
  }

  std::unique_ptr<zmq::socket_t> events_, asker_;
  uint64_t seq_ = 0;
};

}  // namespace accel::aggregator::test
