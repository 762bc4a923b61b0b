#include "accel/aggregator/node_lists.h"

#include <list>
#include <unordered_map>

#include "accel/common/hostlist.h"

namespace accel::aggregator {
namespace {

// Lists expanded on this thread, most recently used first.
class ListCache {
 public:
  NodeSet find(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);  // now the most recent
    return it->second->names;
  }

  void add(const std::string& key, NodeSet names) {
    const size_t size = std::max<size_t>(names->size(), 1);
    if (size > kMaxCachedListNames) return;
    while (!order_.empty() && names_ + size > kMaxCachedListNames) {
      names_ -= std::max<size_t>(order_.back().names->size(), 1);
      index_.erase(order_.back().key);
      order_.pop_back();
    }
    order_.push_front({key, std::move(names)});
    index_[key] = order_.begin();
    names_ += size;
  }

 private:
  struct Entry {
    std::string key;
    NodeSet names;
  };
  std::list<Entry> order_;
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  size_t names_ = 0;  // an unusable list counts as one
};

ListCache& cache() {
  thread_local ListCache c;
  return c;
}

const NodeSet& none() {
  static const NodeSet empty = std::make_shared<const std::set<std::string>>();
  return empty;
}

std::string keyOf(const std::string& node_list, uint32_t node_count) {
  return std::to_string(node_count) + ":" + node_list;
}

// Whether the list's size alone says it can be used: as many names as the
// count says (a list of duplicates is refused too, once expanded).
bool worthReading(const std::string& node_list, uint32_t node_count) {
  if (node_count == 0 || node_list.empty()) return false;
  auto n = countHostlist(node_list);
  return n.ok() && *n == node_count;
}

}  // namespace

NodeSet usableNodeList(const std::string& node_list, uint32_t node_count) {
  if (!worthReading(node_list, node_count)) return none();
  const std::string key = keyOf(node_list, node_count);
  if (auto hit = cache().find(key)) return hit;
  NodeSet listed = none();
  if (auto names = expandHostlist(node_list); names.ok()) {
    auto set = std::make_shared<std::set<std::string>>(names->begin(), names->end());
    if (set->size() == node_count) listed = std::move(set);
  }
  cache().add(key, listed);
  return listed;
}

size_t nodeListCost(const std::string& node_list, uint32_t node_count) {
  if (!worthReading(node_list, node_count)) return 0;
  return cache().find(keyOf(node_list, node_count)) ? 0 : node_count;
}

}  // namespace accel::aggregator
