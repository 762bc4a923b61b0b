#pragma once
// The aggregator's key files: its secret key, and the allow list of node
// keys (AllowListDir, one NODE.pub per node). Both are checked the way munge
// checks its key: whoever can write the allow list can add a node, and
// whoever can read the secret key can pose as the aggregator, so files that
// others could change or read are refused, naming the file.
#include <sys/types.h>

#include <map>
#include <string>
#include <string_view>

#include "accel/common/result.h"
#include "accel/events/curve_keys.h"

namespace accel::aggregator {

struct AllowList {
  // std::less<>: looked up by the views each frame carries, without a copy.
  std::map<std::string, std::string, std::less<>> node_by_key;  // Z85 public key -> node name
  std::map<std::string, std::string, std::less<>> key_by_node;
  // Whether `key` is on the list as `node`'s key.
  bool admits(std::string_view key, std::string_view node) const;
};

// Reads DIR/NODE.pub for every node. The directory and each file must be
// owned by root or `owner` (the uid the daemon runs as) and writable by
// their owner alone; symbolic links are refused. Errors (kPermissionDenied,
// kParse for a file that is not a key or a key listed twice, an I/O error
// for an unreadable directory) name the file; nothing is loaded then.
Result<AllowList> loadAllowList(const std::string& dir, uid_t owner);

// The daemon's secret key: owned by `owner` (the uid it runs as), a regular
// file, no access for group and others. Errors name the file and what to do.
Result<event::CurveKeyPair> loadServerKey(const std::string& path, uid_t owner);

}  // namespace accel::aggregator
