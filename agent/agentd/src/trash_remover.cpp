#include "accel/agentd/trash_remover.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>

#include "accel/common/log.h"

namespace accel::agentd {
namespace {

using Clock = std::chrono::steady_clock;

std::string parentOf(const std::string& path) {
  auto pos = path.rfind('/');
  if (pos == std::string::npos) return ".";
  return pos == 0 ? "/" : path.substr(0, pos);
}

// The names in `dir`, or the error that kept them from being read.
Result<std::vector<std::string>> namesIn(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return sysError("open " + dir, errno);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(d);
  return names;
}

}  // namespace

Result<std::unique_ptr<TrashRemover>> TrashRemover::create(std::vector<std::string> roots,
                                                           Options options, Report report) {
  for (const auto& root : roots)
    ACCEL_TRY(makeDirectory(root + "/" + kTrashName, 0700).context("trash of " + root));
  return std::unique_ptr<TrashRemover>(
      new TrashRemover(std::move(roots), std::move(options), std::move(report)));
}

TrashRemover::TrashRemover(std::vector<std::string> roots, Options options, Report report)
    : roots_(std::move(roots)), options_(std::move(options)), report_(std::move(report)) {
  options_.remove.stop = [this] {
    std::lock_guard<std::mutex> g(mu_);
    return stop_;
  };
}

TrashRemover::~TrashRemover() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status TrashRemover::dispose(const std::string& path) {
  const std::string root = parentOf(path);
  if (std::find(roots_.begin(), roots_.end(), root) == roots_.end())
    return Error(ErrorCode::kInvalidArgument, path + " is in none of the directories with a trash");
  const std::string trash = root + "/" + kTrashName;
  auto moved = moveAside(path, trash);
  if (!moved.ok() && moved.error().code() == ErrorCode::kNotFound &&
      ::access(root.c_str(), F_OK) == 0) {
    // The trash went (an operator emptied the root by hand): made again.
    if (makeDirectory(trash, 0700).ok()) moved = moveAside(path, trash);
  }
  if (moved.ok()) {
    if (!moved->empty()) {
      std::lock_guard<std::mutex> g(mu_);
      wake_ = true;
    }
    cv_.notify_all();
    return okStatus();
  }
  RemoveTreeOptions bounded;
  bounded.stop = [until = Clock::now() + std::chrono::seconds(5)] { return Clock::now() >= until; };
  Status removed = removeTree(path, bounded);
  if (removed.ok()) return okStatus();
  return removed.error().context(moved.error().message() + "; removing it in place");
}

void TrashRemover::start() {
  std::lock_guard<std::mutex> g(mu_);
  if (!thread_.joinable() && !stop_) thread_ = std::thread([this] { run(); });
}

bool TrashRemover::waitEmpty(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t after = passes_begun_;
  wake_ = true;
  cv_.notify_all();
  return cv_.wait_for(lock, timeout, [&] { return last_clean_pass_ > after; });
}

void TrashRemover::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const uint64_t number = ++passes_begun_;
    wake_ = false;
    lock.unlock();
    const bool clean = pass();
    lock.lock();
    if (clean) {
      last_clean_pass_ = number;
      cv_.notify_all();
      cv_.wait(lock, [&] { return stop_ || wake_; });
    } else {
      cv_.wait_for(lock, options_.retry, [&] { return stop_ || wake_; });
    }
  }
}

bool TrashRemover::pass() {
  bool clean = true;
  for (const auto& root : roots_) {
    if (!emptyTrash(root + "/" + kTrashName)) clean = false;
    std::lock_guard<std::mutex> g(mu_);
    if (stop_) return false;
  }
  return clean;
}

// Removes every tree in `trash`; false if any is left.
bool TrashRemover::emptyTrash(const std::string& trash) {
  auto names = namesIn(trash);
  if (!names.ok()) {
    if (report_) report_(trash, names.error(), RemoveTreeStats{}, std::chrono::milliseconds(0));
    return false;
  }
  bool clean = true;
  for (const auto& name : *names) {
    const std::string path = trash + "/" + name;
    RemoveTreeStats stats;
    const auto began = Clock::now();
    Status s = removeTree(path, options_.remove, &stats);
    if (!s.ok()) clean = false;
    if (report_)
      report_(path, s, stats,
              std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began));
    std::lock_guard<std::mutex> g(mu_);
    if (stop_) return false;
  }
  return clean;
}

void logTrashOutcome(const std::string& path, const Status& outcome, const RemoveTreeStats& stats,
                     std::chrono::milliseconds took) {
  using namespace std::chrono_literals;
  const std::string what = "trash: " + path + ": ";
  const std::string figures = std::to_string(stats.removed) + " entries, " +
                              std::to_string(stats.max_depth) + " levels, " +
                              std::to_string(took.count()) + " ms";
  if (!outcome.ok())
    log::warning(what + "not removed yet (" + figures + "): " + outcome.error().message() +
                 "; tried again later");
  else if (took >= 1s)
    log::info(what + "removed (" + figures + ")");
  else
    log::debug(what + "removed (" + figures + ")");
}

}  // namespace accel::agentd
