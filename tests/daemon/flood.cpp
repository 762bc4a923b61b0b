#include "flood.h"

#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace accel::testing {
namespace {

volatile sig_atomic_t g_stop = 0;

int connectTo(const sockaddr_un& a) {
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// The child's loop: refill the held set, see which the agent answered or
// closed, churn a few, again.
FloodCounts floodLoop(const sockaddr_un& a, int held) {
  FloodCounts c;
  std::vector<pollfd> fds(static_cast<size_t>(held), pollfd{-1, POLLIN, 0});
  char buf[4096];
  while (!g_stop) {
    for (auto& p : fds) {
      if (p.fd >= 0) continue;
      p.fd = connectTo(a);
      if (p.fd >= 0)
        ++c.connects;
      else
        ++c.connect_failures;
    }
    if (poll(fds.data(), fds.size(), 1) > 0) {
      for (auto& p : fds) {
        if (p.fd < 0 || p.revents == 0) continue;
        ssize_t n = recv(p.fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0)
          ++c.answered_busy;
        else
          ++c.closed_silently;
        close(p.fd);
        p.fd = -1;
        p.revents = 0;
      }
    }
    for (int i = 0; i < 50; ++i) {
      int fd = connectTo(a);
      if (fd < 0) {
        ++c.connect_failures;
        continue;
      }
      ++c.connects;
      ++c.churned;
      close(fd);
    }
  }
  return c;
}

}  // namespace

Flood::Flood(const std::string& socket_path, uid_t uid, int held) {
  int p[2];
  if (pipe(p) != 0) return;
  pid_ = fork();
  if (pid_ == 0) {
    close(p[0]);
    rlimit r{static_cast<rlim_t>(held) + 64, static_cast<rlim_t>(held) + 64};
    setrlimit(RLIMIT_NOFILE, &r);
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(126);
    struct sigaction sa {};
    sa.sa_handler = [](int) { g_stop = 1; };
    sigaction(SIGTERM, &sa, nullptr);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, socket_path.c_str(), sizeof(a.sun_path) - 1);
    FloodCounts c = floodLoop(a, held);
    (void)!write(p[1], &c, sizeof c);
    _exit(0);
  }
  close(p[1]);
  pipe_ = p[0];
}

Flood::~Flood() { (void)stop(); }

FloodCounts Flood::stop() {
  FloodCounts c;
  if (pid_ <= 0) return c;
  kill(pid_, SIGTERM);
  if (read(pipe_, &c, sizeof c) != static_cast<ssize_t>(sizeof c)) c = FloodCounts{};
  waitpid(pid_, nullptr, 0);
  close(pipe_);
  pid_ = -1;
  return c;
}

}  // namespace accel::testing
