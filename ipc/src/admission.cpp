#include "accel/ipc/admission.h"

#include <algorithm>

namespace accel::ipc {
namespace {

// Users are remembered while they hold a place or their rate still counts;
// past this many, those that do neither are forgotten.
constexpr size_t kRememberedUsers = 256;

std::string count(int n, const char* what) { return std::to_string(n) + " " + what; }

}  // namespace

const char* refusalName(Refusal r) {
  switch (r) {
    case Refusal::kNone:
      return "admitted";
    case Refusal::kAdminsFull:
      return "every admin place taken";
    case Refusal::kUsersFull:
      return "every user place taken";
    case Refusal::kUserConnections:
      return "user connection cap";
    case Refusal::kUserRequests:
      return "user request cap";
    case Refusal::kUserRate:
      return "user rate limit";
  }
  return "refused";
}

std::string refusalMessage(Refusal r, const AdmissionLimits& l) {
  switch (r) {
    case Refusal::kNone:
      return "";
    case Refusal::kAdminsFull:
      return "accel-agentd is busy: " +
             count(l.admin_connections, "requests of root and SlurmUser") +
             " are being answered; try again";
    case Refusal::kUsersFull:
      return "accel-agentd is busy with other users' requests; try again in a moment";
    case Refusal::kUserConnections:
      return "refused: this user already holds " + count(l.user_connections, "connections") +
             " to accel-agentd that have sent nothing (ControlUserConnections)";
    case Refusal::kUserRequests:
      return "refused: this user already has " + count(l.user_requests, "requests") +
             " being answered by accel-agentd (ControlUserRequests)";
    case Refusal::kUserRate:
      return "refused: this user asks accel-agentd more than " +
             std::to_string(static_cast<long>(l.user_rate)) +
             " times a second (ControlUserRate); try again";
  }
  return "refused";
}

void Admission::setLimits(const AdmissionLimits& limits) {
  std::lock_guard<std::mutex> g(mu_);
  limits_ = limits;
}

AdmissionLimits Admission::limits() const {
  std::lock_guard<std::mutex> g(mu_);
  return limits_;
}

// A request place and a token from a bucket of user_burst, refilled at
// user_rate a second (a new uid's starts full).
Refusal Admission::enterAnswered(User& u, Clock::time_point now) {
  if (u.answered >= limits_.user_requests) return Refusal::kUserRequests;
  if (u.refilled == Clock::time_point{}) {
    u.tokens = limits_.user_burst;
  } else if (now > u.refilled) {
    const double secs = std::chrono::duration<double>(now - u.refilled).count();
    u.tokens = std::min(limits_.user_burst, u.tokens + secs * limits_.user_rate);
  }
  u.refilled = std::max(now, u.refilled);
  if (u.tokens < 1) return Refusal::kUserRate;
  u.tokens -= 1;
  ++u.answered;
  return Refusal::kNone;
}

void Admission::forgetIdleUsers(Clock::time_point now) {
  if (by_uid_.size() < kRememberedUsers) return;
  std::erase_if(by_uid_, [&](const auto& kv) {
    const User& u = kv.second;
    const double secs = std::chrono::duration<double>(now - u.refilled).count();
    return u.waiting == 0 && u.answered == 0 &&
           u.tokens + secs * limits_.user_rate >= limits_.user_burst;
  });
}

Refusal Admission::admit(uid_t uid, bool admin, Stage stage, Clock::time_point now) {
  std::lock_guard<std::mutex> g(mu_);
  if (admin) {
    if (admins_ >= limits_.admin_connections) return Refusal::kAdminsFull;
    ++admins_;
    return Refusal::kNone;
  }
  forgetIdleUsers(now);
  User& u = by_uid_[uid];
  if (stage == Stage::kWaiting && u.waiting >= limits_.user_connections)
    return Refusal::kUserConnections;
  if (users_ >= limits_.users_connections) return Refusal::kUsersFull;
  if (stage == Stage::kAnswered) {
    if (auto why = enterAnswered(u, now); why != Refusal::kNone) return why;
  } else {
    ++u.waiting;
  }
  ++users_;
  return Refusal::kNone;
}

Refusal Admission::requestCame(uid_t uid, bool admin, Clock::time_point now) {
  if (admin) return Refusal::kNone;
  std::lock_guard<std::mutex> g(mu_);
  User& u = by_uid_[uid];
  if (auto why = enterAnswered(u, now); why != Refusal::kNone) return why;
  --u.waiting;
  return Refusal::kNone;
}

void Admission::release(uid_t uid, bool admin, Stage stage) {
  std::lock_guard<std::mutex> g(mu_);
  if (admin) {
    --admins_;
    return;
  }
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return;  // never admitted
  int& n = stage == Stage::kWaiting ? it->second.waiting : it->second.answered;
  if (n == 0) return;
  --n;
  --users_;
}

int Admission::adminConnections() const {
  std::lock_guard<std::mutex> g(mu_);
  return admins_;
}

int Admission::userConnections() const {
  std::lock_guard<std::mutex> g(mu_);
  return users_;
}

int Admission::waitingOf(uid_t uid) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? 0 : it->second.waiting;
}

int Admission::answeredOf(uid_t uid) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? 0 : it->second.answered;
}

size_t Admission::rememberedUids() const {
  std::lock_guard<std::mutex> g(mu_);
  return by_uid_.size();
}

}  // namespace accel::ipc
