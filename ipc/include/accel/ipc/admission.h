#pragma once
// Who gets a place on the control socket. Anyone may connect to the public
// socket, so one user holding or churning connections must not crowd out the
// hooks, nor another user, nor that user's own requests. Places are counted
// by the caller's uid (from SO_PEERCRED):
//   - admins (root and SlurmUser) have their own places, which no user can
//     take: users never make an admin wait or be refused;
//   - users together hold at most `users_connections` places;
//   - a user's connection that has not sent its request yet is *waiting*:
//     each uid has at most `user_connections` of them, and the daemon closes
//     one after `user_idle`; a connection whose request has come is
//     *answered*: each uid has at most `user_requests` of them, and each
//     request spends one of the uid's rate tokens (`user_rate` a second, in
//     bursts of `user_burst`).
// So connections held open without a word take only their own kind of place:
// the same user's real requests (accelctl, its job steps) still get theirs.
// Pure bookkeeping with an injected clock: the daemon's workers call it and
// tests drive it. Thread-safe.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace accel::ipc {

struct AdmissionLimits {
  int admin_connections = 64;
  int users_connections = 32;
  int user_connections = 8;  // waiting, per uid
  int user_requests = 4;     // answered, per uid
  double user_rate = 50;     // requests a second, per uid
  double user_burst = 100;
  std::chrono::milliseconds user_idle{250};
};

// How long an admin's connection may take to send its request.
inline constexpr std::chrono::milliseconds kAdminIdle{2000};

enum class Stage {
  kWaiting,   // connected, request not yet received
  kAnswered,  // request received, being answered
};

enum class Refusal {
  kNone,
  kAdminsFull,       // every admin place is taken (by admins)
  kUsersFull,        // every user place is taken
  kUserConnections,  // this uid has its share of waiting connections
  kUserRequests,     // this uid has its share of requests being answered
  kUserRate,         // this uid sends requests faster than its rate
};

// For logs: "user connection cap" and the like.
const char* refusalName(Refusal r);

// What the refused caller reads (accelctl prints it after its own name).
std::string refusalMessage(Refusal r, const AdmissionLimits& limits);

class Admission {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Admission(AdmissionLimits limits = {}) : limits_(limits) {}

  // New limits apply to the next admission; places taken stay taken.
  void setLimits(const AdmissionLimits& limits);
  AdmissionLimits limits() const;

  // A new connection of `uid` in `stage` (kAnswered when its request was
  // already there). kNone: it holds a place until release(). A refused
  // connection holds nothing and costs no rate token.
  Refusal admit(uid_t uid, bool admin, Stage stage, Clock::time_point now);
  // A waiting connection's request came. kNone: it is now kAnswered. Refused:
  // it is still kWaiting (and released as such).
  Refusal requestCame(uid_t uid, bool admin, Clock::time_point now);
  void release(uid_t uid, bool admin, Stage stage);

  // Counts, for tests.
  int adminConnections() const;
  int userConnections() const;  // all users, both stages
  int waitingOf(uid_t uid) const;
  int answeredOf(uid_t uid) const;
  size_t rememberedUids() const;  // bounded: idle uids are forgotten

 private:
  struct User {
    int waiting = 0;
    int answered = 0;
    double tokens = 0;
    Clock::time_point refilled{};
  };
  Refusal enterAnswered(User& u, Clock::time_point now);
  void forgetIdleUsers(Clock::time_point now);

  mutable std::mutex mu_;
  AdmissionLimits limits_;
  int admins_ = 0;
  int users_ = 0;
  std::unordered_map<uid_t, User> by_uid_;
};

}  // namespace accel::ipc
