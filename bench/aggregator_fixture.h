#pragma once
// An in-process accel-aggregatord (store, ingest, server loop on a thread)
// listening on ipc:// in a temp dir, for the event benchmarks.
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "accel/aggregator/server.h"
#include "accel/common/safe_file.h"
#include "temp_dir.h"

namespace accel::bench {

class InProcessAggregator {
 public:
  explicit InProcessAggregator(const std::vector<std::string>& nodes) {
    (void)makeDirectory(dir_ + "/nodes", 0755);
    server_keys_ = *event::generateCurveKeyPair();
    for (const auto& n : nodes) {
      node_keys_.push_back(*event::generateCurveKeyPair());
      std::ofstream(dir_ + "/nodes/" + n + ".pub") << node_keys_.back().public_key << "\n";
    }
    store_ =
        aggregator::Store::open(dir_ + "/events.db", aggregator::Store::Mode::kReadWrite).value();
    ingestor_ = std::make_unique<aggregator::Ingestor>(*store_, metrics_, 64 * 1024);
    if (!ingestor_->load().ok()) std::abort();
    // The daemon's defaults (accel-aggregator.conf): batches of up to 8192 frames, 5 ms open.
    auto server = aggregator::Server::start(
        {endpoint(), server_keys_, dir_ + "/nodes", 64 * 1024, 8192}, *ingestor_, metrics_);
    if (!server.ok()) std::fprintf(stderr, "%s\n", server.error().message().c_str()), std::abort();
    server_ = std::move(*server);
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "agg-loop");
      while (!stop_) (void)server_->poll(std::chrono::milliseconds(20));
    });
  }
  ~InProcessAggregator() {
    stop_ = true;
    thread_.join();
    server_.reset();
    ingestor_.reset();
    store_.reset();
    (void)tmp_.remove();
  }
  std::string endpoint() const { return "ipc://" + dir_ + "/agg.sock"; }
  const std::string& dir() const { return dir_; }
  const event::CurveKeyPair& serverKeys() const { return server_keys_; }
  const event::CurveKeyPair& nodeKeys(size_t i) const { return node_keys_[i]; }
  const aggregator::Metrics& metrics() const { return metrics_; }

 private:
  support::TempDir tmp_{"accel-event-bench"};
  std::string dir_ = tmp_.path();
  event::CurveKeyPair server_keys_;
  std::vector<event::CurveKeyPair> node_keys_;
  aggregator::Metrics metrics_;
  std::unique_ptr<aggregator::Store> store_;
  std::unique_ptr<aggregator::Ingestor> ingestor_;
  std::unique_ptr<aggregator::Server> server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace accel::bench
