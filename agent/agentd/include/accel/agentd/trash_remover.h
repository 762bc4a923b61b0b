#pragma once
// Removes job directories off the hooks' path. A job directory is its user's
// tree, of any size or depth (100,000 files, a chain 10,000 levels deep), and
// removing it can take seconds; an epilog that took that long would hold up
// the node, or be killed and drain it. So the epilog only moves the directory
// aside: one rename into <root>/.trash, a directory of root's on the same
// file system as the job directories of `root`, which no user can reach. One
// thread then removes what the trash holds (removeTree: iterative, a bounded
// number of descriptors, links never followed). A tree it could not finish
// (an entry it cannot remove, a user's process still changing it, the daemon
// stopping) stays in the trash and is tried again after `retry`, and again
// by the next daemon, whose first pass empties what an earlier one left.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accel/common/result.h"
#include "accel/common/safe_file.h"

namespace accel::agentd {

class TrashRemover {
 public:
  static constexpr const char* kTrashName = ".trash";

  struct Options {
    std::chrono::milliseconds retry{60'000};  // after a pass that left something
    RemoveTreeOptions remove;                 // its `stop` is the remover's own
  };
  // Told the outcome of every tree the thread removed or tried to, on that
  // thread (the daemon logs it).
  using Report = std::function<void(const std::string& path, const Status& outcome,
                                    const RemoveTreeStats& stats, std::chrono::milliseconds took)>;

  // Makes <root>/.trash (mode 0700, this process's user) for each of
  // `roots`, the directories whose entries dispose() is given. No thread yet.
  static Result<std::unique_ptr<TrashRemover>> create(std::vector<std::string> roots,
                                                      Options options, Report report = {});
  // Stops the thread within about 1024 entries of the tree under way;
  // the rest stays in the trash for the next process.
  ~TrashRemover();
  TrashRemover(const TrashRemover&) = delete;
  TrashRemover& operator=(const TrashRemover&) = delete;

  // Moves `path`, an entry of one of the roots, into that root's trash and
  // wakes the thread. A missing `path` is success; a missing trash is made
  // again. If the rename fails
  // (which needs a fault of the node: both are root's, on one file system)
  // the tree is removed on the spot, for at most 5 s.
  Status dispose(const std::string& path);
  // Starts the thread. Its first pass empties the trash, including what an
  // earlier process left there.
  void start();
  // True once a pass begun after this call found every trash empty; false
  // after `timeout`. For tests.
  bool waitEmpty(std::chrono::milliseconds timeout);

 private:
  TrashRemover(std::vector<std::string> roots, Options options, Report report);
  void run();
  bool pass();  // true: every trash was emptied
  bool emptyTrash(const std::string& trash);

  std::vector<std::string> roots_;
  Options options_;
  Report report_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool wake_ = false;
  uint64_t passes_begun_ = 0;
  uint64_t last_clean_pass_ = 0;  // number of the last pass that found everything empty
  std::thread thread_;
};

// The daemon's Report: a failure is a warning (the tree is tried again), a
// removal of a second or more a note, others a debug line.
void logTrashOutcome(const std::string& path, const Status& outcome, const RemoveTreeStats& stats,
                     std::chrono::milliseconds took);

}  // namespace accel::agentd
