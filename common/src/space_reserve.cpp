#include "accel/common/space_reserve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <mutex>

namespace accel::space {
namespace {

struct Entry {
  Reserve r;
  dev_t dev = 0;
};

std::mutex mu;
std::vector<Entry>& entries() {
  static std::vector<Entry> all;
  return all;
}

int64_t wallNowNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

uint64_t freeBytes(const std::string& dir) {
  struct statvfs v {};
  if (::statvfs(dir.c_str(), &v) != 0) return 0;
  return uint64_t{v.f_bavail} * v.f_frsize;
}

// Makes the reserve's file: `bytes` of allocated blocks, not a sparse file.
Status allocate(const std::string& dir, uint64_t bytes) {
  const std::string path = dir + "/" + kReserveFile;
  const std::string tmp = path + ".new";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return sysError("space reserve: create " + tmp, errno);
  int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  ::close(fd);
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return sysError("space reserve: allocate " + std::to_string(bytes) + " bytes in " + path, err);
  }
  return okStatus();
}

Entry* onDevice(dev_t dev) {
  for (auto& e : entries())
    if (e.dev == dev) return &e;
  return nullptr;
}

}  // namespace

Status hold(const std::string& dir, uint64_t bytes) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return sysError("space reserve: " + dir, errno);
  std::lock_guard lock(mu);
  Entry* e = onDevice(st.st_dev);
  if (e && e->r.held) return okStatus();
  Status made = allocate(dir, bytes);
  if (!e) {
    entries().push_back({Reserve{dir, bytes, false, 0, 0}, st.st_dev});
    e = &entries().back();
  }
  // Not held: given up already, as far as new jobs are concerned; restore()
  // tries again.
  e->r.held = made.ok();
  e->r.free_bytes = freeBytes(e->r.dir);
  return made;
}

bool release(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return false;
  std::lock_guard lock(mu);
  Entry* e = onDevice(st.st_dev);
  if (!e || !e->r.held) return false;
  const std::string path = e->r.dir + "/" + kReserveFile;
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return false;
  e->r.held = false;
  e->r.released_ns = wallNowNs();
  e->r.free_bytes = freeBytes(e->r.dir);
  return true;
}

std::vector<Reserve> restore() {
  std::lock_guard lock(mu);
  std::vector<Reserve> out;
  for (auto& e : entries()) {
    e.r.free_bytes = freeBytes(e.r.dir);
    if (!e.r.held && e.r.free_bytes >= 2 * e.r.bytes && allocate(e.r.dir, e.r.bytes).ok()) {
      e.r.held = true;
      e.r.free_bytes = freeBytes(e.r.dir);
    }
    out.push_back(e.r);
  }
  return out;
}

std::string shortage() {
  {
    std::lock_guard lock(mu);
    bool spent = false;
    for (const auto& e : entries()) spent = spent || !e.r.held;
    if (!spent) return "";
  }
  for (const auto& r : restore()) {
    if (r.held) continue;
    return "the file system holding " + r.dir + " is full (" + std::to_string(r.free_bytes / 1024) +
           " KiB free): its reserve of " + std::to_string(r.bytes / 1024) +
           " KiB (ReserveSpace) went to the agent's records, and no new job is taken until it "
           "has room for the reserve twice over";
  }
  return "";
}

std::vector<Reserve> reserves() {
  std::lock_guard lock(mu);
  std::vector<Reserve> out;
  for (const auto& e : entries()) out.push_back(e.r);
  return out;
}

void forgetAll() {
  std::lock_guard lock(mu);
  entries().clear();
}

}  // namespace accel::space
