#include "accel/agentd/control_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "accel/agent/job_dir_step.h"
#include "accel/common/safe_file.h"
#include "accel/ipc/control_requests.h"
#include "accel/schemas/control_generated.h"
#include "fake_clock.h"
#include "temp_dir.h"
#include "test_inventory.h"

namespace accel::agentd {
namespace {

using namespace std::chrono_literals;
namespace fb = accel::control;

// Polls `done` every 10 ms for at most 10 s.
template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

class ControlServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(makeDirectory(tmp_.path() + "/jobs", 0755).ok());
    std::vector<std::unique_ptr<agent::JobStep>> steps;
    steps.push_back(std::make_unique<agent::JobDirStep>(tmp_.path() + "/jobs"));
    manager_ =
        std::make_unique<agent::JobManager>(agent::JobStore(tmp_.path() + "/state"),
                                            testing::twoGpuInventory(), std::move(steps), clock_);
    ASSERT_TRUE(manager_->recover().ok());
    ctx_.manager = manager_.get();
    ctx_.node_name = "n1";
    ctx_.version = "test";
  }

  std::unique_ptr<ControlServer> listen(std::chrono::milliseconds spare_idle = 60s) {
    ipc::AdmissionLimits limits;
    limits.user_idle = 10s;  // a held connection stays held, whoever runs the test
    auto server = ControlServer::listen({.control_socket = control_path_,
                                         .admin_socket = admin_path_,
                                         .slurm_uid = 64030,
                                         .limits = limits,
                                         .spare_idle = spare_idle});
    EXPECT_TRUE(server.ok()) << server.error().message();
    if (!server.ok()) return nullptr;
    EXPECT_TRUE((*server)->serve({.requests = &ctx_, .answered = [this] { ++answered_; }}).ok());
    return std::move(*server);
  }

  // A status request's reply on `path`, verified; its outcome.
  static fb::Outcome statusOn(const std::string& path) {
    auto request = ipc::encodeStatusRequest();
    auto reply = ipc::call(path, request.data(), request.size(), 5s);
    if (!reply.ok()) return fb::Outcome::NodeFault;
    flatbuffers::Verifier v(reply->data(), reply->size());
    if (!v.VerifyBuffer<fb::Reply>(nullptr)) return fb::Outcome::BadRequest;
    return flatbuffers::GetRoot<fb::Reply>(reply->data())->outcome();
  }

  support::TempDir tmp_{"accel-control-server"};
  std::string control_path_ = tmp_.path() + "/control.sock";
  std::string admin_path_ = tmp_.path() + "/control-admin.sock";
  support::FakeClock clock_{5};
  std::unique_ptr<agent::JobManager> manager_;
  HandlerContext ctx_;
  std::atomic<int> answered_{0};
};

TEST_F(ControlServerTest, AnswersOnBothSocketsAndSaysSoAfterEachRequest) {
  auto server = listen();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(statusOn(control_path_), fb::Outcome::Ok);
  EXPECT_EQ(statusOn(admin_path_), fb::Outcome::Ok);
  EXPECT_TRUE(eventually([&] { return answered_.load() == 2; }));
  EXPECT_TRUE(eventually([&] { return server->inFlight() == 0; }));
}

TEST_F(ControlServerTest, ABusySocketGetsAWorkerPerConnectionAndSparesLeaveWhenIdle) {
  auto server = listen(100ms);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->workers(), 1);
  // Connections that send nothing each hold a worker until they close.
  std::vector<ipc::Socket> held;
  for (int i = 0; i < 4; ++i) {
    auto conn = ipc::connectControl(control_path_);
    ASSERT_TRUE(conn.ok()) << conn.error().message();
    held.push_back(std::move(*conn));
  }
  ASSERT_TRUE(eventually([&] { return server->inFlight() == 4; }));
  // Every held connection's worker, and one idle for the next.
  EXPECT_TRUE(eventually([&] { return server->workers() == 5; })) << server->workers();
  held.clear();
  EXPECT_TRUE(eventually([&] { return server->inFlight() == 0; }));
  // The spares idled past spare_idle and left; the last idle one stays.
  EXPECT_TRUE(eventually([&] { return server->workers() == 1; })) << server->workers();
  // A new connection is still served (by the remaining worker, which starts
  // a spare and joins the threads of those that left).
  EXPECT_EQ(statusOn(control_path_), fb::Outcome::Ok);
}

TEST_F(ControlServerTest, StopWaitsForRequestsInFlightThenJoinsEveryWorker) {
  auto server = listen();
  ASSERT_NE(server, nullptr);
  auto conn = ipc::connectControl(control_path_);
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE(eventually([&] { return server->inFlight() == 1; }));
  // The held connection's request comes while stop() waits for it.
  std::thread late([&] {
    std::this_thread::sleep_for(50ms);
    auto request = ipc::encodeStatusRequest();
    auto reply = ipc::call(*conn, request.data(), request.size(), 5s);
    EXPECT_TRUE(reply.ok()) << reply.error().message();
  });
  server->stop();
  late.join();
  EXPECT_EQ(server->inFlight(), 0);
  EXPECT_EQ(server->workers(), 0);
  EXPECT_EQ(answered_.load(), 1);
  // No worker takes a connection any more: the sockets are closed.
  EXPECT_FALSE(ipc::connectControl(control_path_).ok());
  server->stop();  // again: nothing left to do
}

}  // namespace
}  // namespace accel::agentd
