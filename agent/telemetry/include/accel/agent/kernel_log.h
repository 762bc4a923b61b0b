#pragma once
// Follows the kernel log for the lines the GPU driver writes there (Xid
// reports), on a thread of its own: never on a hook's path.
//
// What it reads (KernelLog in accel.conf):
//   - /dev/kmsg (a character device): each read() returns one record,
//     "PRIO,SEQ,USEC,FLAGS;MESSAGE\n" followed by optional " KEY=VALUE"
//     lines; only the first line is handed on. Reading starts at the end
//     (SEEK_END), so a restarted agent does not report old records again.
//     EPIPE means records were overwritten before they were read: reading
//     goes on with the oldest left.
//   - a regular file: followed from its end as lines are appended (a file
//     that shrinks is read again from its start);
//   - a FIFO: every line written to it (opened read-write, so that a writer
//     that closes does not end the stream).
// A line is untrusted text (any process may write to /dev/kmsg): it is cut
// at kMaxLine bytes (the rest of it is dropped, never taken for a new line),
// and the caller parses it (nvml::parseXidLine, into a telemetry::XidReport).
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "accel/common/result.h"

namespace accel::agent {

// One read() as the reader sees it: the bytes read, 0 at the end of what
// there is now, or -1 with errno in `err`.
struct ReadOutcome {
  long n = 0;
  int err = 0;
};

// Where the bytes come from; the real one reads a file descriptor, tests
// script the outcomes (EPIPE, EAGAIN, records).
class LogSource {
 public:
  virtual ~LogSource() = default;
  virtual ReadOutcome read(char* buf, size_t size) = 0;
  // Records (kmsg: each read is one record) or a byte stream of lines.
  virtual bool records() const = 0;
  // A descriptor that polls readable when there may be more to read (kmsg,
  // a FIFO: itself; a file: an inotify watch of it), so that an idle reader
  // sleeps until then; -1: none, and the reader looks again every kPollWait.
  virtual int readyFd() const { return -1; }
  // Called after readyFd() polled readable (a watch's notices are consumed).
  virtual void consumeReady() {}
  // Called at the end of what there is. True when there is more to read
  // after all (a file cut short is read again from its start).
  virtual bool atEnd() { return false; }
};

// Splits a byte stream into lines of at most `max` bytes: the bytes of a
// longer line past `max` are dropped up to its newline.
class LineSplitter {
 public:
  explicit LineSplitter(size_t max) : max_(max) {}
  // Appends `bytes`; returns the lines completed by them (without '\n').
  std::vector<std::string> feed(std::string_view bytes);
  size_t truncated() const { return truncated_; }

 private:
  size_t max_;
  std::string partial_;
  bool skipping_ = false;  // in the dropped tail of an over-long line
  size_t truncated_ = 0;   // lines cut at max_
};

// The first line of a /dev/kmsg record (its message with the record's
// "PRIO,SEQ,USEC,FLAGS;" prefix), at most `max` bytes.
std::string_view kmsgFirstLine(std::string_view record, size_t max);
// Whether a /dev/kmsg record is the kernel's own (facility 0). A record a
// process wrote into /dev/kmsg (root, or whoever the device's mode lets)
// is not: a forged "NVRM: Xid" line must never drain a node.
bool kmsgFromKernel(std::string_view record);

class KernelLogReader {
 public:
  static constexpr size_t kMaxLine = 8192;
  using LineFn = std::function<void(std::string_view line)>;

  struct State {
    uint64_t lines = 0;        // lines handed on
    uint64_t overwritten = 0;  // EPIPE: records lost before they were read
    uint64_t truncated = 0;    // lines cut at kMaxLine
    uint64_t errors = 0;       // other read errors
    uint64_t not_kernel = 0;   // kmsg records a process wrote, skipped
    std::string last_error;
  };

  // Opens `path` (see above). Errors: it cannot be opened or is neither a
  // character device, a regular file nor a FIFO.
  static Result<std::unique_ptr<LogSource>> open(const std::string& path);

  KernelLogReader(std::unique_ptr<LogSource> source, LineFn on_line);
  ~KernelLogReader();  // stop()
  KernelLogReader(const KernelLogReader&) = delete;
  KernelLogReader& operator=(const KernelLogReader&) = delete;

  void start();
  void stop();  // idempotent; wakes the thread and waits for it
  // Reads what there is now and hands each line on (the thread's step;
  // tests call it directly). Returns the lines handed on.
  size_t pump();
  State state() const;

  static constexpr std::chrono::milliseconds kPollWait{200};

 private:
  void run();

  std::unique_ptr<LogSource> source_;
  LineFn on_line_;
  LineSplitter splitter_{kMaxLine};
  std::vector<char> buf_;
  mutable std::mutex mu_;
  State state_;
  std::atomic<bool> stop_{false};
  int stop_fd_ = -1;  // an eventfd that wakes the thread's poll
  std::thread thread_;
};

}  // namespace accel::agent
