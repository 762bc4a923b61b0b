#include "accel/aggregator/batch_writer.h"

#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace accel::aggregator {

BatchWriter::BatchWriter(Store& store)
    : store_(store), event_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (event_fd_ < 0) std::perror("aggregator: batch writer: eventfd"), std::abort();
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "agg-writer");  // as top -H and perf show it
    run();
  });
}

BatchWriter::~BatchWriter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  close(event_fd_);
}

void BatchWriter::submit(Batch batch) {
  if (busy_) std::fputs("aggregator: batch writer: submit while busy\n", stderr), std::abort();
  busy_ = true;
  {
    std::lock_guard lock(mu_);
    todo_ = std::move(batch);
  }
  cv_.notify_all();
}

std::optional<std::pair<Batch, Status>> BatchWriter::take(bool block) {
  std::unique_lock lock(mu_);
  if (block) cv_.wait(lock, [this] { return done_.has_value() || !busy_; });
  if (!done_) return std::nullopt;
  auto out = std::move(done_);
  done_.reset();
  busy_ = false;
  uint64_t n;
  (void)!read(event_fd_, &n, sizeof n);  // reset the counter
  return out;
}

// Finishes the batch it holds even when asked to stop: a transaction is
// never abandoned half-way by this thread.
void BatchWriter::run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || todo_.has_value(); });
    if (!todo_) return;
    Batch batch = std::move(*todo_);
    todo_.reset();
    lock.unlock();
    Status s = store_.commit(batch);
    lock.lock();
    done_.emplace(std::move(batch), std::move(s));
    uint64_t one = 1;
    (void)!write(event_fd_, &one, sizeof one);
    cv_.notify_all();
  }
}

}  // namespace accel::aggregator
