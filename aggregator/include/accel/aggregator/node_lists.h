#pragma once
// The node lists of PrologStarted events, read once. Every node of a job
// sends the same compact list ("sbn[0001-2048]"), and one of 65,536 names
// takes about 10 ms to expand into a set: read for each of its nodes, twice
// (admission, then the merge), a large job's prologs would cost seconds of the
// ingest thread, and a key holder sending large lists could stall it past the
// watchdog. So a list is expanded at most once while it is in use (a cache
// bounded by names, on the thread that reads it), and its cost is known
// before it is paid (nodeListCost), so that ingest can spread the work.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

namespace accel::aggregator {

using NodeSet = std::shared_ptr<const std::set<std::string>>;

// The names of `node_list` when they are exactly `node_count` distinct nodes;
// otherwise (no count, unparseable text, more names than kMaxHostlistNames,
// a count that disagrees, a name given twice) an empty set: unusable. Never
// null.
NodeSet usableNodeList(const std::string& node_list, uint32_t node_count);

// How many names usableNodeList would expand for this list now: 0 when it is
// cached or is unusable by its count alone (read without expanding it).
size_t nodeListCost(const std::string& node_list, uint32_t node_count);

// At most this many names are kept expanded, on each thread (the least
// recently used lists leave first): about 10 MB, four lists of the largest
// size, or a thousand jobs of 256 nodes.
inline constexpr size_t kMaxCachedListNames = 262144;

}  // namespace accel::aggregator
