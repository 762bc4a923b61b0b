#pragma once
// The stranger of `ingest_bench --flood`: a child process that opens CURVE
// connections with random keys towards the aggregator as fast as it can
// (HELLO after HELLO), and the CPU bound that stands in for its being on
// another machine.
//
// On a site the stranger is another host: its CPU is not the aggregator's.
// Here it runs on the same cores, so unbounded it takes CPU from the
// aggregator that a remote flooder never would, and what is measured is the
// flooder's appetite rather than the aggregator's defences. CpuQuota puts it
// in a cpu cgroup of its own with a quota (cgroup v1's cpu controller, or
// v2's cpu.max), so that it costs this machine at most that share while its
// connections still reach the aggregator, which counts and cuts them.
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "accel/events/curve_keys.h"

namespace accel::bench {

// A cpu cgroup of its own, /sys/fs/cgroup[/cpu]/accel-flood-PID, holding its
// processes to `percent` of one core. Removed by the destructor (its
// processes must have ended by then).
class CpuQuota {
 public:
  // Null, with `why` said, when no cpu controller can be written (not root,
  // no cgroup file system).
  static std::unique_ptr<CpuQuota> create(int percent, std::string* why) {
    const std::string name = "accel-flood-" + std::to_string(::getpid());
    const long quota_us = long(percent) * 1000;                        // of a 100 ms period
    if (::access("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", F_OK) == 0) {  // v1
      std::string dir = "/sys/fs/cgroup/cpu/" + name;
      if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return fail(dir, why);
      auto q = std::unique_ptr<CpuQuota>(new CpuQuota(dir));
      if (!q->write("cpu.cfs_period_us", "100000") ||
          !q->write("cpu.cfs_quota_us", std::to_string(quota_us)))
        return fail(dir + "/cpu.cfs_quota_us", why);
      return q;
    }
    if (::access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {  // v2
      std::ofstream("/sys/fs/cgroup/cgroup.subtree_control") << "+cpu\n";
      std::string dir = "/sys/fs/cgroup/" + name;
      if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return fail(dir, why);
      auto q = std::unique_ptr<CpuQuota>(new CpuQuota(dir));
      if (!q->write("cpu.max", std::to_string(quota_us) + " 100000"))
        return fail(dir + "/cpu.max", why);
      return q;
    }
    *why = "no cpu cgroup controller under /sys/fs/cgroup";
    return nullptr;
  }
  ~CpuQuota() { ::rmdir(dir_.c_str()); }
  CpuQuota(const CpuQuota&) = delete;
  CpuQuota& operator=(const CpuQuota&) = delete;

  bool add(pid_t pid) { return write("cgroup.procs", std::to_string(pid)); }
  // Periods in which the quota held the group back (cpu.stat nr_throttled).
  uint64_t throttled() const {
    std::ifstream in(dir_ + "/cpu.stat");
    std::string key;
    uint64_t value = 0;
    while (in >> key >> value)
      if (key == "nr_throttled") return value;
    return 0;
  }

 private:
  explicit CpuQuota(std::string dir) : dir_(std::move(dir)) {}
  static std::unique_ptr<CpuQuota> fail(const std::string& what, std::string* why) {
    *why = "cannot set up " + what + " (" + std::strerror(errno) + "; run as root)";
    return nullptr;
  }
  bool write(const std::string& file, const std::string& value) {
    std::ofstream out(dir_ + "/" + file);
    out << value << "\n";
    out.flush();
    return bool(out);
  }
  std::string dir_;
};

// The stranger: a child process, forked while the caller has one thread,
// that waits for start() and then, from 127.0.0.2, opens `sockets` DEALERs
// with keys of their own every 20 ms, each replacing the last (libzmq does
// not try again after a refusal), until stop(). `cpu_percent` > 0: held to
// that share of one core (CpuQuota); the constructor aborts when that
// cannot be done, so that a bound asked for is never silently missing.
class Flooder {
 public:
  explicit Flooder(int cpu_percent = 0) {
    void* shared = ::mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) std::abort();
    connections_ = new (shared) std::atomic<uint64_t>(0);
    if (cpu_percent > 0) {
      std::string why;
      quota_ = CpuQuota::create(cpu_percent, &why);
      if (!quota_) {
        std::fprintf(stderr, "ingest_bench: flooder's CPU bound: %s\n", why.c_str());
        std::exit(1);
      }
    }
    if (::pipe(go_) != 0) std::abort();
    pid_ = ::fork();
    if (pid_ == 0) child();
    ::close(go_[0]);
    if (quota_ && !quota_->add(pid_)) {
      std::fprintf(stderr, "ingest_bench: flooder's CPU bound: cannot move it into its cgroup\n");
      std::exit(1);
    }
  }
  ~Flooder() {
    if (pid_ > 0) (void)stop();
    ::munmap(static_cast<void*>(connections_), sizeof(std::atomic<uint64_t>));
  }
  Flooder(const Flooder&) = delete;
  Flooder& operator=(const Flooder&) = delete;

  void start(const std::string& host_port, const std::string& server_key, int sockets) {
    std::string line = host_port + " " + server_key + " " + std::to_string(sockets) + "\n";
    if (::write(go_[1], line.data(), line.size()) != ssize_t(line.size())) std::abort();
  }
  // Connections the stranger has opened so far.
  uint64_t connections() const { return connections_->load(); }
  // Periods in which its CPU bound held it back (0 without a bound).
  uint64_t throttled() const { return quota_ ? quota_->throttled() : 0; }
  // Ends the flood; returns the CPU seconds the child used.
  double stop() {
    ::close(go_[1]);
    ::kill(pid_, SIGKILL);
    int status = 0;
    rusage u{};
    ::wait4(pid_, &status, 0, &u);
    pid_ = -1;
    auto secs = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    return secs(u.ru_utime) + secs(u.ru_stime);
  }

 private:
  [[noreturn]] void child() {
    ::close(go_[1]);
    char buf[256] = {};
    ssize_t n = ::read(go_[0], buf, sizeof buf - 1);
    if (n <= 0) ::_exit(0);
    char host_port[128] = {}, key[64] = {};
    int sockets = 0;
    if (std::sscanf(buf, "%127s %63s %d", host_port, key, &sockets) != 3) ::_exit(1);
    rlimit fd{};
    ::getrlimit(RLIMIT_NOFILE, &fd);
    fd.rlim_cur = fd.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &fd);
    zmq::context_t ctx(2);
    std::string via = std::string("tcp://127.0.0.2:0;") + host_port;
    while (true) {
      std::vector<std::unique_ptr<zmq::socket_t>> round;
      for (int i = 0; i < sockets; ++i) {
        auto keys = *event::generateCurveKeyPair();
        try {  // out of descriptors for a moment: the next round tries again
          auto d = std::make_unique<zmq::socket_t>(ctx, zmq::socket_type::dealer);
          d->set(zmq::sockopt::linger, 0);
          d->set(zmq::sockopt::curve_serverkey, std::string(key));
          d->set(zmq::sockopt::curve_publickey, keys.public_key);
          d->set(zmq::sockopt::curve_secretkey, keys.secret_key);
          d->connect(via);
          round.push_back(std::move(d));
          ++*connections_;
        } catch (const zmq::error_t&) {
          break;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  int go_[2] = {-1, -1};
  pid_t pid_ = -1;
  std::atomic<uint64_t>* connections_ = nullptr;  // shared with the child
  std::unique_ptr<CpuQuota> quota_;
};

}  // namespace accel::bench
