#pragma once
// The local control channel: AF_UNIX SOCK_SEQPACKET, one request datagram and
// one reply datagram per connection. SEQPACKET keeps message boundaries, so a
// request is read whole or refused whole; the peer's identity comes from the
// kernel (SO_PEERCRED), never from the message.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "accel/common/result.h"

namespace accel::ipc {

// Largest request or reply the channel carries. Anything longer is truncated
// by the kernel (MSG_TRUNC tells us) and refused.
constexpr size_t kMaxMessageBytes = size_t{64} * 1024;

struct PeerCred {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// Owns a connected or listening socket descriptor.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket();
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Binds and listens on `path` with the given mode. A stale socket file at
// `path` is replaced; a symlink or any other file type there is refused
// (never followed, never deleted), so a planted link cannot redirect us.
// The parent directory must exist. The socket is non-blocking, close-on-exec.
Result<Socket> listenControl(const std::string& path, mode_t mode);

// Accepts one connection (non-blocking, close-on-exec); kUnavailable if none
// is pending.
Result<Socket> acceptControl(const Socket& listener);

Result<PeerCred> peerCred(const Socket& conn);

// What a connection has sent so far, without taking it: a message (or an
// error to read), nothing yet, or nothing ever (the peer closed it).
enum class Pending { kMessage, kNothing, kClosed };
Pending pending(const Socket& conn);

// Drops what the peer has sent and not been read, without waiting. A socket
// closed with unread data resets the connection, and the peer would then lose
// the answer sent to it before the close.
void discardPending(const Socket& conn);

// Reads one message, waiting at most `timeout`. Empty messages, oversize
// messages (over kMaxMessageBytes) and a timeout are errors.
Result<std::vector<uint8_t>> recvMessage(const Socket& conn, std::chrono::milliseconds timeout);

// Sends one message, waiting at most `timeout` for buffer space.
Status sendMessage(const Socket& conn, const uint8_t* data, size_t size,
                   std::chrono::milliseconds timeout);

// Connects to the daemon at `path`. kUnavailable if nobody listens there.
Result<Socket> connectControl(const std::string& path);

// One round trip: connect, send, receive the reply, all within `timeout`.
Result<std::vector<uint8_t>> call(const std::string& path, const uint8_t* data, size_t size,
                                  std::chrono::milliseconds timeout);

// The same round trip on a connection already made.
Result<std::vector<uint8_t>> call(const Socket& conn, const uint8_t* data, size_t size,
                                  std::chrono::milliseconds timeout);

// Whether an error of connectControl() or call() may pass if tried again: the
// daemon's backlog was full, or it closed the connection before answering
// (it refused the caller and its answer was lost). Not when nobody listens.
bool worthRetrying(const Error& e);

}  // namespace accel::ipc
