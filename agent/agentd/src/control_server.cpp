// The control sockets' worker pool: it accepts and serves connections, and
// drains at stop.
//
// Idle workers wait on both listening sockets themselves, each through its
// own epoll set with EPOLLEXCLUSIVE (a connection wakes one waiter, not all),
// together with an eventfd that tells them to stop; no thread hands a connection to another. A
// worker always tries the admin socket first, so a hook never queues behind users' connections. A
// worker that takes the last idle place starts another first, so a connection never waits for a
// thread to be made. Places are counted per uid and stage (ipc::Admission): admins have theirs,
// users theirs, and the pool has one worker more than both, which answers Busy. A refused
// connection is answered at once and closed; a user's connection that sends
// nothing is closed after ControlUserIdleMs; one the client closed before it
// was taken costs nothing but the accept. Spares leave after a minute without work;
// the last idle worker waits without a time limit, so an idle daemon wakes
// for nothing.
#include "accel/agentd/control_server.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include "accel/common/log.h"
#include "accel/schemas/control_generated.h"

namespace accel::agentd {
namespace {

using namespace std::chrono_literals;

// An epoll set holding the listeners (exclusive wake-up) and the stop
// eventfd; -1 with errno set when one cannot be made.
int workerEpoll(int listener, int admin_listener, int stop_fd) {
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) return -1;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLEXCLUSIVE;
  ev.data.fd = listener;
  bool ok = epoll_ctl(epfd, EPOLL_CTL_ADD, listener, &ev) == 0;
  ev.data.fd = admin_listener;
  ok = ok && epoll_ctl(epfd, EPOLL_CTL_ADD, admin_listener, &ev) == 0;
  ev.events = EPOLLIN;
  ev.data.fd = stop_fd;
  ok = ok && epoll_ctl(epfd, EPOLL_CTL_ADD, stop_fd, &ev) == 0;
  if (ok) return epfd;
  int err = errno;
  close(epfd);
  errno = err;
  return -1;
}

// A failing accept (out of file descriptors) repeats as long as it lasts: it
// is said once every 10 s at most, with how often it happened meanwhile.
void warnAcceptFailed(const std::string& message) {
  static std::atomic<int64_t> last_said{0};
  static std::atomic<uint64_t> unsaid{0};
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_said.load();
  if (now - last >= 10 && last_said.compare_exchange_strong(last, now)) {
    const uint64_t more = unsaid.exchange(0);
    log::warning(
        "control: " + message +
        (more > 0 ? " (and " + std::to_string(more) + " more times since the last report)" : ""));
  } else {
    ++unsaid;
  }
}

// Refusals come in floods when a user holds or churns connections: they are
// said once every 10 s at most, with how many there were meanwhile.
void noteRefusal(uid_t uid, ipc::Refusal why) {
  static std::mutex mu;
  static std::chrono::steady_clock::time_point last_said{};
  static uint64_t unsaid = 0;
  const auto now = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> g(mu);
  ++unsaid;
  if (last_said != std::chrono::steady_clock::time_point{} && now - last_said < 10s) return;
  const uint64_t n = std::exchange(unsaid, 0);
  last_said = now;
  g.unlock();
  log::warning("control: refused a connection of uid " + std::to_string(uid) + " (" +
               ipc::refusalName(why) + ")" +
               (n > 1 ? "; " + std::to_string(n) + " refusals since the last report" : ""));
}

// The nice value a worker takes while it handles a user's connection.
constexpr int kUserWorkNice = 19;

// Users' connections are taken and served at a lower CPU priority than
// root's and SlurmUser's, so on a node whose cores are all busy a flood of
// user connections slows the flood, not the hooks. A worker waits for the
// next connection at full priority (it may be root's), and is lowered once
// it knows the caller is a user. Raising the nice value is always
// allowed, lowering it back needs CAP_SYS_NICE: a daemon without it (tried
// once) serves everyone at the same priority.
void workAtPriorityOf(bool admin) {
  static const bool can_restore = [] {
    const auto tid = static_cast<id_t>(gettid());
    return setpriority(PRIO_PROCESS, tid, 1) == 0 && setpriority(PRIO_PROCESS, tid, 0) == 0;
  }();
  thread_local int current = 0;
  const int want = admin ? 0 : kUserWorkNice;
  if (!can_restore || want == current) return;
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), want) == 0) current = want;
}

// Root and SlurmUser only: mode 0600, owned by SlurmUser (root passes the
// mode anyway).
Result<ipc::Socket> listenAdmin(const std::string& path, uid_t slurm_uid) {
  auto s = ipc::listenControl(path, 0600);
  ACCEL_TRY(s);
  if (slurm_uid != 0 && ::chown(path.c_str(), slurm_uid, static_cast<gid_t>(-1)) != 0)
    return sysError("chown " + path, errno);
  return s;
}

}  // namespace

// Anyone may connect; what a caller may do is decided per request from its
// kernel-reported uid.
Result<std::unique_ptr<ControlServer>> ControlServer::listen(const Options& options) {
  std::unique_ptr<ControlServer> server(new ControlServer(options));
  auto listener = ipc::listenControl(options.control_socket, 0666);
  if (!listener.ok()) return listener.error().context("control socket");
  server->listener_ = std::move(*listener);
  auto admin_listener = listenAdmin(options.admin_socket, options.slurm_uid);
  if (!admin_listener.ok()) return admin_listener.error().context("admin socket");
  server->admin_listener_ = std::move(*admin_listener);
  server->stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (server->stop_fd_ < 0) return sysError("eventfd", errno);
  server->admission_.setLimits(options.limits);
  return server;
}

ControlServer::~ControlServer() {
  stop();
  if (stop_fd_ >= 0) close(stop_fd_);
}

Status ControlServer::serve(Services services) {
  services_ = std::move(services);
  if (!startWorker()) return Error(ErrorCode::kUnavailable, "no worker to serve the socket");
  return okStatus();
}

int ControlServer::workers() const {
  std::lock_guard<std::mutex> g(pool_mu_);
  return workers_;
}

// Answers Busy with the reason, without waiting for room to send it, and
// closes (the caller drops the socket).
void ControlServer::refuse(const ipc::Socket& conn, uid_t uid, ipc::Refusal why) {
  auto reply = errorReply(static_cast<uint8_t>(control::Outcome::Busy),
                          ipc::refusalMessage(why, admission_.limits()));
  (void)ipc::sendMessage(conn, reply.data(), reply.size(), 0ms);
  ipc::discardPending(conn);  // or the close resets the connection, answer and all
  noteRefusal(uid, why);
}

// The admin socket's pending connection first, else the public one's;
// kUnavailable when neither has one.
Result<ipc::Socket> ControlServer::acceptNext() {
  auto conn = ipc::acceptControl(admin_listener_);
  if (conn.ok() || conn.error().code() != ErrorCode::kUnavailable) return conn;
  return ipc::acceptControl(listener_);
}

// Joins the workers that left (spares that idled a minute). Their threads
// have ended or are about to: they left the counts as their last act.
void ControlServer::reapLeft() {
  std::vector<std::thread> left;
  {
    std::lock_guard<std::mutex> g(pool_mu_);
    left.swap(left_);
  }
  for (auto& t : left) t.join();
}

// False when no worker was started: the pool is full or stopping, or the
// worker's epoll set or thread cannot be made. A worker that asked for a spare
// goes back to accepting once it has served its connection.
bool ControlServer::startWorker() {
  reapLeft();
  int epfd = workerEpoll(listener_.fd(), admin_listener_.fd(), stop_fd_);
  if (epfd < 0) {
    log::error(std::string("control: cannot start a worker: epoll: ") + std::strerror(errno));
    return false;
  }
  std::lock_guard<std::mutex> g(pool_mu_);
  const auto limits = admission_.limits();
  // Every admitted connection served, and one more worker answering Busy.
  if (pool_stop_ || workers_ > limits.admin_connections + limits.users_connections) {
    close(epfd);
    return false;
  }
  try {
    // Under the lock: the worker's first act takes it, so it is in threads_
    // before it can leave.
    std::thread t(&ControlServer::worker, this, epfd);
    const auto id = t.get_id();
    threads_.emplace(id, std::move(t));
  } catch (const std::system_error& e) {
    log::error(std::string("control: cannot start a worker thread: ") + e.what());
    close(epfd);
    return false;
  }
  ++workers_;
  ++idle_workers_;
  return true;
}

// Waits for a connection and serves it. Returns false when the worker is to
// leave: the server stops, or the worker is a spare that idled a minute
// (`left`: it has then already left the pool's counts).
bool ControlServer::acceptOne(int epfd, bool* left) {
  int timeout_ms;
  {
    std::lock_guard<std::mutex> g(pool_mu_);
    if (pool_stop_) return false;
    timeout_ms = idle_workers_ > 1 ? static_cast<int>(options_.spare_idle.count()) : -1;
  }
  // Back to full priority before waiting: the next connection may be root's.
  workAtPriorityOf(true);
  epoll_event ev{};
  int n = epoll_wait(epfd, &ev, 1, timeout_ms);
  if (n < 0) return errno == EINTR;
  std::unique_lock<std::mutex> g(pool_mu_);
  if (pool_stop_ || (n > 0 && ev.data.fd == stop_fd_)) return false;
  if (n == 0) {
    if (idle_workers_ <= 1) return true;
    --idle_workers_;
    --workers_;
    *left = true;
    pool_cv_.notify_all();
    return false;
  }
  g.unlock();
  auto conn = acceptNext();
  if (!conn.ok()) {
    // Another worker took it, or the client gave up; or accept itself fails
    // (out of file descriptors): the connection stays pending and the socket
    // readable, so wait a little rather than spin on it.
    if (conn.error().code() != ErrorCode::kUnavailable) {
      warnAcceptFailed(conn.error().message());
      std::this_thread::sleep_for(100ms);
    }
    return true;
  }
  auto cred = ipc::peerCred(*conn);
  if (!cred.ok()) return true;  // closed: whose it is cannot be known
  // A connection closed before it was taken (churn) needs nothing; one whose
  // request is there needs no waiting place.
  const ipc::Pending sent = ipc::pending(*conn);
  if (sent == ipc::Pending::kClosed) return true;
  const bool admin = isAdmin(cred->uid);
  workAtPriorityOf(admin);
  const auto stage = sent == ipc::Pending::kMessage ? ipc::Stage::kAnswered : ipc::Stage::kWaiting;
  if (auto why = admission_.admit(cred->uid, admin, stage, std::chrono::steady_clock::now());
      why != ipc::Refusal::kNone) {
    refuse(*conn, cred->uid, why);
    return true;
  }
  ++in_flight_;
  g.lock();
  bool last_idle = --idle_workers_ == 0;
  g.unlock();
  if (last_idle) startWorker();
  serveConnection(std::move(*conn), *cred, admin, stage);
  g.lock();
  ++idle_workers_;
  return true;
}

void ControlServer::worker(int epfd) {
  bool left = false;
  while (acceptOne(epfd, &left)) {
  }
  close(epfd);
  leave(left);
}

// The worker's last act: its thread goes to left_ for another to join.
void ControlServer::leave(bool spare) {
  std::lock_guard<std::mutex> g(pool_mu_);
  if (!spare) {  // a spare already left the counts
    --idle_workers_;
    --workers_;
  }
  auto it = threads_.find(std::this_thread::get_id());
  if (it != threads_.end()) {
    left_.push_back(std::move(it->second));
    threads_.erase(it);
  }
  pool_cv_.notify_all();
}

void ControlServer::serveConnection(ipc::Socket conn, const ipc::PeerCred& cred, bool admin,
                                    ipc::Stage stage) {
  try {
    serveOne(conn, cred, admin, &stage);
  } catch (const std::exception& e) {
    // A bug, not an input problem: report it, answer, and keep the daemon up.
    log::error(std::string("control: request failed unexpectedly: ") + e.what());
    auto reply = errorReply(static_cast<uint8_t>(control::Outcome::NodeFault),
                            "internal error; see the agent's log");
    (void)ipc::sendMessage(conn, reply.data(), reply.size(), 100ms);
  } catch (...) {
    log::error("control: request failed unexpectedly");
  }
  conn = ipc::Socket();  // closed before its place is given back
  admission_.release(cred.uid, admin, stage);
  std::lock_guard<std::mutex> g(drain_mu_);
  if (--in_flight_ == 0) drained_.notify_all();
}

// A user's connection gets ControlUserIdleMs to send its request and 100 ms
// to take the reply (it fits the socket's buffer: only a client that never
// reads waits); an admin's 2 s each. `stage` follows the connection.
void ControlServer::serveOne(ipc::Socket& conn, const ipc::PeerCred& cred, bool admin,
                             ipc::Stage* stage) {
  auto msg = ipc::recvMessage(conn, admin ? ipc::kAdminIdle : admission_.limits().user_idle);
  if (msg.ok()) {
    if (*stage == ipc::Stage::kWaiting) {
      if (auto why = admission_.requestCame(cred.uid, admin, std::chrono::steady_clock::now());
          why != ipc::Refusal::kNone) {
        refuse(conn, cred.uid, why);
        return;
      }
      *stage = ipc::Stage::kAnswered;
    }
    auto [reply, relay] = dispatchRequest(*services_.requests, Caller{cred.uid, cred.pid}, *msg);
    if (relay && services_.relay != nullptr) {  // the relay answers on the connection from now on
      services_.relay->adopt(std::move(conn), cred.uid, admin, *relay);
      return;
    }
    auto sent = ipc::sendMessage(conn, reply.data(), reply.size(), admin ? 2000ms : 100ms);
    if (!sent.ok()) {  // a user's client that left early is its own business, and may be many
      const std::string line =
          "control: reply to pid " + std::to_string(cred.pid) + ": " + sent.error().message();
      admin ? log::warning(line) : log::debug(line);
    }
    if (services_.answered) services_.answered();
  } else if (msg.error().code() == ErrorCode::kInvalidArgument) {
    auto reply =
        errorReply(static_cast<uint8_t>(control::Outcome::BadRequest), msg.error().message());
    (void)ipc::sendMessage(conn, reply.data(), reply.size(), 100ms);
    log::warning("control: refused a request: " + msg.error().message());
  }
}

void ControlServer::stop() {
  {
    std::lock_guard<std::mutex> g(pool_mu_);
    if (stopped_) return;
    stopped_ = true;
    pool_stop_ = true;
  }
  uint64_t one = 1;
  if (stop_fd_ >= 0) (void)!write(stop_fd_, &one, sizeof one);
  {
    std::unique_lock<std::mutex> g(drain_mu_);
    if (!drained_.wait_for(g, 30s, [this] { return in_flight_.load() == 0; }))
      log::warning("stop: requests still in flight after 30 s; exiting anyway");
  }
  std::vector<std::thread> stuck;
  {
    std::unique_lock<std::mutex> g(pool_mu_);
    // Each worker erases its own thread as its last act.
    if (!pool_cv_.wait_for(g, 5s, [this] { return threads_.empty(); }))
      log::warning("stop: " + std::to_string(threads_.size()) +
                   " worker thread(s) still busy after 5 s; left to the process's exit");
    for (auto& [id, t] : threads_) stuck.push_back(std::move(t));
    threads_.clear();
  }
  reapLeft();
  for (auto& t : stuck) t.detach();  // blocked inside a request past every bound
  if (stuck.empty()) {               // else a stuck worker may still wait on them
    listener_ = ipc::Socket();
    admin_listener_ = ipc::Socket();
  }
}

}  // namespace accel::agentd
