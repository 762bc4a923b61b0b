#pragma once
// Safe file creation for files other users' jobs will read (IPUoF configs,
// per-job directories) and for the agent's own state. Every function refuses
// to follow a symbolic link in the final component and sets owner and mode
// explicitly, so a file is never briefly readable by the wrong user.
#include <sys/types.h>

#include <string>
#include <string_view>

#include "accel/common/result.h"

namespace accel {

// How far a write must survive. Process-crash durability is free: once
// rename() returns, the new file is in the kernel's cache and outlives the
// writer. Power-loss durability costs two fsyncs (~0.4 ms on this machine's
// disk) and is only worth it for data that outlives the boot.
enum class Durability { kProcessCrash, kPowerLoss };

struct FileOwner {
  uid_t uid = static_cast<uid_t>(-1);  // -1: leave as the creating process
  gid_t gid = static_cast<gid_t>(-1);
};

// Writes `content` to `path` atomically: a temporary file in the same
// directory (O_EXCL, created with `mode`), fchown, write, rename over `path`;
// with kPowerLoss also fsync of the file before the rename and of the
// directory after. A reader sees the old file or the new one, never a torn
// one. A symlink at `path` is replaced, never followed.
Status writeFileAtomic(const std::string& path, std::string_view content, mode_t mode,
                       FileOwner owner = {}, Durability durability = Durability::kPowerLoss);

// Reads a whole regular file (refusing symlinks and files over `max_bytes`).
Result<std::string> readFileNoFollow(const std::string& path, size_t max_bytes = 16 << 20);

// Creates `path` as a directory with exactly `mode` and `owner`. If it already
// exists as a real directory, its owner and mode are set; a symlink or other
// file in its place is an error (kConflict). The parent must exist.
Status makeDirectory(const std::string& path, mode_t mode, FileOwner owner = {});

// Removes `path` and everything below it without following symlinks (a link
// is removed, never its target). A missing `path` is success.
Status removeTree(const std::string& path);

// True if `name` is usable as one path component: non-empty, not "." or "..",
// no '/', no NUL, no control characters, at most 255 bytes.
bool isSafePathComponent(std::string_view name);

}  // namespace accel
