#pragma once
// Commits sealed ingest batches on a thread of its own, so receiving and
// verifying the next batch overlaps with writing (and fsyncing) this one.
// One batch at a time; its outcome is collected by the thread that submitted
// it, which alone sends acknowledgements. An eventfd becomes readable when an
// outcome is ready, so that thread can wait for it and its socket together.
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "accel/aggregator/store.h"

namespace accel::aggregator {

class BatchWriter {
 public:
  // `store` must accept calls from two threads (Store::open makes it so).
  explicit BatchWriter(Store& store);
  // Waits for the batch in flight, if any; its outcome is dropped.
  ~BatchWriter();
  BatchWriter(const BatchWriter&) = delete;
  BatchWriter& operator=(const BatchWriter&) = delete;

  // True from submit() until the outcome has been taken.
  bool busy() const { return busy_; }
  // Starts writing `batch`. Precondition: !busy().
  void submit(Batch batch);
  // The finished batch and how its commit went; nullopt while still writing
  // (or when idle). `block`: wait for it instead.
  std::optional<std::pair<Batch, Status>> take(bool block);
  // Readable while a finished outcome waits to be taken.
  int readyFd() const { return event_fd_; }

 private:
  void run();

  Store& store_;
  int event_fd_;
  bool busy_ = false;  // submitter's view; only that thread reads or writes it
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Batch> todo_;
  std::optional<std::pair<Batch, Status>> done_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace accel::aggregator
