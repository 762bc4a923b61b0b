#pragma once
// What the tests of the aggregator's sockets share: a temporary directory
// whose allow list (nodes/) holds node n1's key, the server's keys, a store
// with its ingestor, and CURVE dealers to the server's endpoints. Subclasses
// close their sockets in TearDown before calling this one's, which stops the
// server and removes the directory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

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

}  // namespace accel::aggregator::test
