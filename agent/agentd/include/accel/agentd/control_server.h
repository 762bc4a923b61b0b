#pragma once
// The control sockets and the threads that serve them. Two sockets:
// ControlSocket for anyone, AdminSocket for root and SlurmUser only (the
// hooks use it); places on either are counted per uid (ipc::Admission), and
// no user can take an admin's.
//
// Connections are served by a pool of worker threads (one per connection in
// flight, bounded, reused, gone after a minute idle), so a slow vendor call
// in one job's prolog never delays another. Idle workers wait on the
// listening sockets themselves, so no thread hands a connection to another.
// Every worker is a std::thread of this object: a spare that leaves is joined
// by the next start of a worker or by stop(), which joins them all.
//
// Threads: the workers, and nothing else.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "accel/agentd/control_handler.h"
#include "accel/agentd/event_relay.h"
#include "accel/common/result.h"
#include "accel/ipc/admission.h"
#include "accel/ipc/control_socket.h"

namespace accel::agentd {

class ControlServer {
 public:
  struct Options {
    std::string control_socket;  // mode 0666
    std::string admin_socket;    // mode 0600, owned by SlurmUser
    uid_t slurm_uid = 0;         // with root, the only uid admitted as an admin
    ipc::AdmissionLimits limits;
    // A spare worker (one of several idle) leaves after this long without work.
    std::chrono::milliseconds spare_idle{60000};
  };

  // What served connections reach. All must outlive the server.
  struct Services {
    // Each request is answered by dispatchRequest(*requests, ...).
    const HandlerContext* requests = nullptr;
    // Takes connections whose request is relayed; null when requests->relay_events is false.
    EventRelay* relay = nullptr;
    // Called after each answered request, on the worker's thread; must not block.
    std::function<void()> answered;
  };

  // Binds both sockets; serves nothing yet.
  static Result<std::unique_ptr<ControlServer>> listen(const Options& options);
  ~ControlServer();  // stop()
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Starts the first worker. Fails when no thread can be made.
  Status serve(Services services);
  // New limits apply to the next connection (SIGHUP).
  void setLimits(const ipc::AdmissionLimits& limits) { admission_.setLimits(limits); }
  // No new connection is taken once this starts; requests being served
  // finish (30 s at most), then every worker is joined and the sockets
  // closed. A worker still inside a request after that bound is left to the
  // process's exit, and said so in the log. Idempotent.
  void stop();

  // Workers now, and connections admitted and not yet closed: for tests.
  int workers() const;
  int inFlight() const { return in_flight_.load(); }

 private:
  explicit ControlServer(Options options) : options_(std::move(options)) {}
  bool startWorker();
  void reapLeft();
  void worker(int epfd);
  bool acceptOne(int epfd, bool* left);
  Result<ipc::Socket> acceptNext();
  bool isAdmin(uid_t uid) const { return uid == 0 || uid == options_.slurm_uid; }
  void refuse(const ipc::Socket& conn, uid_t uid, ipc::Refusal why);
  void serveConnection(ipc::Socket conn, const ipc::PeerCred& cred, bool admin, ipc::Stage stage);
  void serveOne(ipc::Socket& conn, const ipc::PeerCred& cred, bool admin, ipc::Stage* stage);
  void leave(bool spare);

  Options options_;
  Services services_;
  ipc::Socket listener_;        // ControlSocket: anyone
  ipc::Socket admin_listener_;  // AdminSocket: root and SlurmUser
  ipc::Admission admission_;
  int stop_fd_ = -1;  // an eventfd: tells idle workers to leave
  std::atomic<int> in_flight_{0};
  mutable std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  // Every worker's thread, by id; a worker that leaves moves its own to
  // left_, to be joined by another thread.
  std::unordered_map<std::thread::id, std::thread> threads_;
  std::vector<std::thread> left_;
  int workers_ = 0;
  int idle_workers_ = 0;
  bool pool_stop_ = false;
  bool stopped_ = false;
  std::mutex drain_mu_;
  std::condition_variable drained_;
};

}  // namespace accel::agentd
