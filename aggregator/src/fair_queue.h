#pragma once
// Work of many users taken in turn: each user's items in their order, the
// users round-robin, so that one user's backlog never delays another's
// next item by more than one item of each other user. A user holds at most
// `per_user` items waiting or in progress (taken and not yet finished).
// Not thread-safe: the caller locks.
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace accel::aggregator {

template <typename T>
class FairQueue {
 public:
  FairQueue(size_t per_user, size_t total) : per_user_(per_user), total_(total) {}

  // False, and `item` left as it was, when the user or the queue is full;
  // `force` queues regardless (work admitted earlier, coming back).
  bool push(const std::string& user, T&& item, bool force = false) {
    auto& u = users_[user];
    if (!force && (u.count >= per_user_ || waiting_ >= total_)) {
      if (u.count == 0) users_.erase(user);
      return false;
    }
    if (u.items.empty()) turn_.push_back(user);
    u.items.push_back(std::move(item));
    ++u.count;
    ++waiting_;
    return true;
  }

  // The next item, from the user whose turn it is; nullopt when none waits.
  // The user's count stays raised until finish(user).
  std::optional<std::pair<std::string, T>> pop() {
    if (turn_.empty()) return std::nullopt;
    std::string user = std::move(turn_.front());
    turn_.pop_front();
    auto& u = users_[user];
    T item = std::move(u.items.front());
    u.items.pop_front();
    --waiting_;
    if (!u.items.empty()) turn_.push_back(user);
    return std::make_pair(std::move(user), std::move(item));
  }

  void finish(const std::string& user) {
    auto it = users_.find(user);
    if (it == users_.end()) return;
    if (--it->second.count == 0) users_.erase(it);
  }

  size_t waiting() const { return waiting_; }

 private:
  struct User {
    std::deque<T> items;
    size_t count = 0;  // waiting or in progress
  };
  size_t per_user_, total_;
  size_t waiting_ = 0;
  std::map<std::string, User> users_;
  std::deque<std::string> turn_;  // users with items waiting, next first
};

}  // namespace accel::aggregator
