#include "accel/agent/kernel_log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace accel::agent {
namespace {

// A file descriptor read as kmsg records, a FIFO's stream or a followed file.
class FdSource : public LogSource {
 public:
  enum class Kind { kKmsg, kFifo, kFile };
  FdSource(int fd, Kind kind, off_t offset, const std::string& path)
      : fd_(fd), kind_(kind), offset_(offset) {
    if (kind_ != Kind::kFile) return;
    // A file gives no readiness of its own: a watch of its changes does.
    watch_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (watch_ >= 0 && ::inotify_add_watch(watch_, path.c_str(), IN_MODIFY | IN_ATTRIB) < 0) {
      ::close(watch_);
      watch_ = -1;
    }
  }
  ~FdSource() override {
    ::close(fd_);
    if (watch_ >= 0) ::close(watch_);
  }

  ReadOutcome read(char* buf, size_t size) override {
    const ssize_t n = ::read(fd_, buf, size);
    if (n < 0) return {-1, errno};
    if (kind_ == Kind::kFile) offset_ += n;
    return {static_cast<long>(n), 0};
  }
  bool records() const override { return kind_ == Kind::kKmsg; }
  int readyFd() const override { return kind_ == Kind::kFile ? watch_ : fd_; }
  void consumeReady() override {
    if (kind_ != Kind::kFile || watch_ < 0) return;
    char events[4096];
    while (::read(watch_, events, sizeof events) > 0) {
    }
  }
  bool atEnd() override {
    if (kind_ != Kind::kFile) return false;
    struct stat st {};
    // A file cut short (rotated in place, or rewritten) is read from its start.
    if (::fstat(fd_, &st) != 0 || st.st_size >= offset_) return false;
    offset_ = 0;
    return ::lseek(fd_, 0, SEEK_SET) == 0;
  }

 private:
  int fd_;
  Kind kind_;
  off_t offset_ = 0;
  int watch_ = -1;  // inotify, for a file
};

}  // namespace

std::vector<std::string> LineSplitter::feed(std::string_view bytes) {
  std::vector<std::string> lines;
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (!skipping_) {
      const size_t room = max_ - partial_.size();
      partial_.append(piece.substr(0, room));
      if (piece.size() > room) {
        skipping_ = true;  // the rest of this line is dropped
        ++truncated_;
      }
    }
    if (nl == std::string_view::npos) break;
    lines.push_back(std::move(partial_));
    partial_.clear();
    skipping_ = false;
    bytes.remove_prefix(nl + 1);
  }
  return lines;
}

bool kmsgFromKernel(std::string_view record) {
  // "PRIO,..." where PRIO is facility * 8 + level; the kernel's facility is 0,
  // so its records' PRIO is a single digit 0-7. Anything a process wrote to
  // /dev/kmsg carries its own facility (1, user, by default).
  return record.size() >= 2 && record[0] >= '0' && record[0] <= '7' && record[1] == ',';
}

std::string_view kmsgFirstLine(std::string_view record, size_t max) {
  record = record.substr(0, record.find('\n'));
  return record.substr(0, max);
}

Result<std::unique_ptr<LogSource>> KernelLogReader::open(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return sysError("kernel log " + path, errno);
  FdSource::Kind kind;
  int flags = O_CLOEXEC | O_NONBLOCK;
  if (S_ISCHR(st.st_mode)) {
    kind = FdSource::Kind::kKmsg;
    flags |= O_RDONLY;
  } else if (S_ISFIFO(st.st_mode)) {
    kind = FdSource::Kind::kFifo;
    flags |= O_RDWR;  // a writer of our own: the stream never ends
  } else if (S_ISREG(st.st_mode)) {
    kind = FdSource::Kind::kFile;
    flags |= O_RDONLY;
  } else {
    return Error(ErrorCode::kInvalidArgument,
                 "kernel log " + path + ": neither a character device, a FIFO nor a file");
  }
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return sysError("kernel log " + path, errno);
  // Old records and lines were read by the agent before this one (or nobody
  // needs them now): reading starts at the end.
  off_t end = 0;
  if (kind != FdSource::Kind::kFifo && (end = ::lseek(fd, 0, SEEK_END)) < 0) {
    const int err = errno;
    ::close(fd);
    return sysError("kernel log " + path + ": seek to its end", err);
  }
  return std::unique_ptr<LogSource>(std::make_unique<FdSource>(fd, kind, end, path));
}

KernelLogReader::KernelLogReader(std::unique_ptr<LogSource> source, LineFn on_line)
    : source_(std::move(source)),
      on_line_(std::move(on_line)),
      buf_(kMaxLine * 2),
      stop_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

KernelLogReader::~KernelLogReader() {
  stop();
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

void KernelLogReader::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void KernelLogReader::stop() {
  stop_ = true;
  if (stop_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
}

KernelLogReader::State KernelLogReader::state() const {
  std::lock_guard<std::mutex> g(mu_);
  State s = state_;
  return s;
}

size_t KernelLogReader::pump() {
  size_t handed = 0;
  // Bounded per call, so that stop() is noticed even under a flood.
  for (int reads = 0; reads < 4096 && !stop_; ++reads) {
    const ReadOutcome r = source_->read(buf_.data(), buf_.size());
    if (r.n < 0 && r.err == EINTR) continue;
    if (r.n < 0 && r.err == EPIPE) {
      std::lock_guard<std::mutex> g(mu_);
      ++state_.overwritten;
      continue;
    }
    if (r.n < 0 && r.err != EAGAIN) {
      std::lock_guard<std::mutex> g(mu_);
      ++state_.errors;
      state_.last_error = sysError("read", r.err).message();
      break;
    }
    if (r.n <= 0) {
      if (source_->atEnd()) continue;
      break;
    }
    const std::string_view bytes(buf_.data(), static_cast<size_t>(r.n));
    std::vector<std::string> lines;
    if (source_->records()) {
      if (kmsgFromKernel(bytes)) {
        lines.emplace_back(kmsgFirstLine(bytes, kMaxLine));
      } else {
        std::lock_guard<std::mutex> g(mu_);
        ++state_.not_kernel;
      }
    } else {
      const size_t before = splitter_.truncated();
      lines = splitter_.feed(bytes);
      std::lock_guard<std::mutex> g(mu_);
      state_.truncated += splitter_.truncated() - before;
    }
    for (const auto& line : lines) on_line_(line);
    handed += lines.size();
    std::lock_guard<std::mutex> g(mu_);
    state_.lines += lines.size();
  }
  return handed;
}

// Sleeps in poll() until the source may have more or stop() is called: an
// idle node's reader never wakes up (a source without a descriptor to poll,
// or a reader without its eventfd, looks again every kPollWait).
void KernelLogReader::run() {
  while (!stop_) {
    pump();
    if (stop_) break;
    const int ready = source_->readyFd();
    pollfd fds[2] = {{ready, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const bool sleeps = ready >= 0 && stop_fd_ >= 0;
    const int n = ::poll(fds, 2, sleeps ? -1 : static_cast<int>(kPollWait.count()));
    if (n > 0 && (fds[0].revents & POLLIN) != 0) source_->consumeReady();
  }
}

}  // namespace accel::agent
