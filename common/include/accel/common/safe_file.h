#pragma once
// Safe file creation for files other users' jobs will read (IPUoF configs,
// per-job directories) and for the agent's own state. Every function refuses
// to follow a symbolic link in the final component and sets owner and mode
// explicitly, so a file is never briefly readable by the wrong user.
#include <sys/types.h>

#include <cstdint>
#include <functional>
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

// How far one removeTree call may go. The defaults suit a tree a user built
// to hurt: any depth, any width, entries appearing while it runs.
struct RemoveTreeOptions {
  // Directory descriptors held at once, the parent of `path` not counted
  // (at least 2). Deeper levels are closed and reopened through ".." on the
  // way back up, checked against the device and inode seen on the way down.
  int max_open_dirs = 16;
  // How many times, in all, a directory may be found not empty after its
  // entries were removed (someone adds entries meanwhile) before the call
  // gives up on it (kConflict).
  int max_rescans = 256;
  // Asked every 1024 entries; true ends the call early (kTimeout), leaving
  // the rest for a later call.
  std::function<bool()> stop;
};

struct RemoveTreeStats {
  uint64_t removed = 0;    // entries removed, directories included
  uint64_t max_depth = 0;  // deepest level entered, `path` itself being 1
  int max_open_dirs = 0;   // most directory descriptors held at once
};

// Removes `path` and everything below it without following symlinks (a link
// is removed, never its target), without recursion (depth costs heap, not
// stack), holding at most options.max_open_dirs descriptors, and without
// leaving the file system `path` is on (a mount point below it is left, and
// reported). Every step is relative to a descriptor of a directory checked to
// belong to the tree, so moving directories around meanwhile cannot steer it
// outside. An entry that cannot be removed is skipped and the rest removed;
// the first such error is returned, with how many there were. Entries removed
// or added by others meanwhile are expected (ENOENT, ENOTEMPTY, EISDIR,
// ENOTDIR are handled). A missing `path` is success.
Status removeTree(const std::string& path, const RemoveTreeOptions& options = {},
                  RemoveTreeStats* stats = nullptr);

// Renames `path` into the directory `trash_dir` (same file system) under a
// name no other call picks (<base of path>.<nanoseconds>.<counter>): one
// rename, whatever the tree holds. Returns the new path; empty when `path`
// does not exist (nothing to move). `path` is not followed if it is a link.
Result<std::string> moveAside(const std::string& path, const std::string& trash_dir);

// Checks that only root (or the user running this process) can change what
// the directory `path` holds, as sshd's StrictModes and munge check theirs:
// `path` is a real directory (not a symbolic link), owned by root or by this
// process's user, writable by neither group nor others; and so is every
// directory above it, except that one writable by others is accepted when
// its sticky bit is set (/tmp). kPermissionDenied names the directory and the
// fault; kNotFound when something is missing.
Status checkRootOnlyDirectory(const std::string& path);

// True if `name` is usable as one path component: non-empty, not "." or "..",
// no '/', no NUL, no control characters, at most 255 bytes.
bool isSafePathComponent(std::string_view name);

}  // namespace accel
