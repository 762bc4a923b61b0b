#include "accel/ipc/control_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace accel::ipc {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kBusyText = "accel-agentd is busy";
constexpr const char* kClosedText = "peer closed the connection";

Result<sockaddr_un> socketAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path))
    return Error(ErrorCode::kInvalidArgument, "control socket path too long or empty: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// Waits for `events` on fd until `deadline`.
Status waitFor(int fd, short events, Clock::time_point deadline, const char* what) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return Error(ErrorCode::kTimeout, std::string(what) + ": timed out");
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc > 0) return okStatus();
    if (rc < 0 && errno != EINTR) return sysError(what, errno);
  }
}

// A stale socket file is removed; anything else at the path is refused.
Status clearSocketPath(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return okStatus();
    return sysError("stat " + path, errno);
  }
  if (!S_ISSOCK(st.st_mode))
    return Error(ErrorCode::kConflict,
                 path + ": exists and is not a socket (a symlink or file there is never replaced)");
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return sysError("unlink " + path, errno);
  return okStatus();
}

}  // namespace

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

Result<Socket> listenControl(const std::string& path, mode_t mode) {
  auto addr = socketAddress(path);
  ACCEL_TRY(addr);
  ACCEL_TRY(clearSocketPath(path));
  Socket s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!s.valid()) return sysError("socket", errno);
  // bind() creates the file with the umask applied; narrow it first so there
  // is no window in which the socket is more open than `mode`.
  mode_t old = ::umask(0777 & ~mode);
  int rc = ::bind(s.fd(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(sockaddr_un));
  int err = errno;
  ::umask(old);
  if (rc != 0) return sysError("bind " + path, err);
  if (::chmod(path.c_str(), mode) != 0) return sysError("chmod " + path, errno);
  if (::listen(s.fd(), SOMAXCONN) != 0) return sysError("listen " + path, errno);
  return s;
}

Result<Socket> acceptControl(const Socket& listener) {
  int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
      return Error(ErrorCode::kUnavailable, "no pending connection");
    return sysError("accept", errno);
  }
  return Socket(fd);
}

Result<PeerCred> peerCred(const Socket& conn) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(conn.fd(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return sysError("SO_PEERCRED", errno);
  return PeerCred{cred.pid, cred.uid, cred.gid};
}

Pending pending(const Socket& conn) {
  uint8_t byte = 0;
  for (;;) {
    ssize_t n = ::recv(conn.fd(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return Pending::kMessage;
    if (n == 0) return Pending::kClosed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Pending::kNothing;
    return Pending::kMessage;  // an error: recvMessage() reads and reports it
  }
}

void discardPending(const Socket& conn) {
  uint8_t byte = 0;
  for (int i = 0; i < 16; ++i) {
    ssize_t n = ::recv(conn.fd(), &byte, 1, MSG_DONTWAIT | MSG_TRUNC);
    if (n == 0 || (n < 0 && errno != EINTR)) return;
  }
}

Result<std::vector<uint8_t>> recvMessage(const Socket& conn, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  // One byte more than the cap: a message that fills it was too long.
  std::vector<uint8_t> buf(kMaxMessageBytes + 1);
  for (;;) {
    ssize_t n = ::recv(conn.fd(), buf.data(), buf.size(), MSG_TRUNC);
    if (n > 0) {
      if (static_cast<size_t>(n) > kMaxMessageBytes)
        return Error(ErrorCode::kInvalidArgument,
                     "message of " + std::to_string(n) + " bytes exceeds the " +
                         std::to_string(kMaxMessageBytes) + "-byte limit");
      buf.resize(static_cast<size_t>(n));
      return buf;
    }
    if (n == 0) return Error(ErrorCode::kUnavailable, kClosedText);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return sysError("recv", errno);
    ACCEL_TRY(waitFor(conn.fd(), POLLIN, deadline, "receive"));
  }
}

Status sendMessage(const Socket& conn, const uint8_t* data, size_t size,
                   std::chrono::milliseconds timeout) {
  if (size == 0 || size > kMaxMessageBytes)
    return Error(ErrorCode::kInvalidArgument,
                 "message size " + std::to_string(size) + " out of range");
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    ssize_t n = ::send(conn.fd(), data, size, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(size)) return okStatus();
    if (n >= 0) return Error(ErrorCode::kIo, "short send on a seqpacket socket");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return sysError("send", errno);
    ACCEL_TRY(waitFor(conn.fd(), POLLOUT, deadline, "send"));
  }
}

Result<Socket> connectControl(const std::string& path) {
  auto addr = socketAddress(path);
  ACCEL_TRY(addr);
  Socket s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!s.valid()) return sysError("socket", errno);
  if (::connect(s.fd(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(sockaddr_un)) != 0) {
    int err = errno;
    if (err == ENOENT || err == ECONNREFUSED)
      return Error(ErrorCode::kUnavailable,
                   "accel-agentd is not running (no listener on " + path + ")");
    // A full backlog answers EAGAIN on a non-blocking unix connect.
    if (err == EAGAIN) return Error(ErrorCode::kUnavailable, kBusyText + (" (" + path + ")"));
    return sysError("connect " + path, err);
  }
  return s;
}

Result<std::vector<uint8_t>> call(const std::string& path, const uint8_t* data, size_t size,
                                  std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto conn = connectControl(path);
  ACCEL_TRY(conn);
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return call(*conn, data, size, std::max(left, std::chrono::milliseconds(1)));
}

Result<std::vector<uint8_t>> call(const Socket& conn, const uint8_t* data, size_t size,
                                  std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto sent = sendMessage(conn, data, size, timeout);
  if (!sent.ok()) {
    // The daemon may answer before reading (Busy) and close: its answer is
    // still queued for us, and says more than the broken pipe does.
    auto early = recvMessage(conn, std::chrono::milliseconds(0));
    if (early.ok()) return early;
    return sent.error();
  }
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return recvMessage(conn, std::max(left, std::chrono::milliseconds(1)));
}

bool worthRetrying(const Error& e) {
  const std::string& m = e.message();
  if (e.code() == ErrorCode::kUnavailable) return m.rfind(kBusyText, 0) == 0 || m == kClosedText;
  return m.find(std::strerror(ECONNRESET)) != std::string::npos ||
         m.find(std::strerror(EPIPE)) != std::string::npos;
}

}  // namespace accel::ipc
