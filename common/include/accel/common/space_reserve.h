#pragma once
// Space held back for the agent's own records. The job table, the fabric
// ledger and the event spool sit on file systems the agent shares with other
// programs (/run, /var). When one of them fills, the write that fails is
// often an epilog's, and a job whose end cannot be recorded drains its node
// and loses its accounting. So each such file system holds a reserve: a file
// of allocated blocks (`.accel-space-reserve` in the first directory named on
// it). A write there that fails for lack of space (safe_file's
// writeFileAtomic, the spool's appends) gives the reserve up and is tried
// once more; the jobs that run finish and are recorded. While a reserve is
// spent the daemon refuses new jobs (their prologs fail as a node fault that
// names the file system) and holds the reserve again as soon as the file
// system has room for it twice over.
//
// Process-wide: the daemon registers its directories at start; any thread may
// write. Thread-safe.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "accel/common/result.h"

namespace accel::space {

inline constexpr const char* kReserveFile = ".accel-space-reserve";

// Holds `bytes` on the file system of `dir` (nothing more when a reserve is
// already held there, whatever directory named it). An error when the space
// cannot be allocated (the file system is already too full, or does not
// allocate): the reserve is then known as given up, new jobs are refused
// (shortage) and restore() tries again.
Status hold(const std::string& dir, uint64_t bytes);

// Gives up the reserve on the file system of `dir`, if one is held there:
// for a write that just failed there with ENOSPC or EDQUOT, which may then
// be tried once more. Returns whether one was given up.
bool release(const std::string& dir);

struct Reserve {
  std::string dir;          // where its file is
  uint64_t bytes = 0;       // its size
  bool held = false;        // false: given up for a write, not held again yet
  int64_t released_ns = 0;  // CLOCK_REALTIME of the last release; 0: never
  uint64_t free_bytes = 0;  // the file system's free space when last looked at
};

// Holds again each reserve given up whose file system now has twice its size
// free; every reserve's free space is read again. Returns all reserves.
std::vector<Reserve> restore();

// Empty while every reserve is held. Otherwise, after trying restore(), why
// a new job cannot be taken: the file system whose reserve is still given
// up, what it has free, and what holding the reserve again needs.
std::string shortage();

// The reserves as they are, without touching the file systems.
std::vector<Reserve> reserves();

// Forgets every reserve (their files stay): for tests.
void forgetAll();

}  // namespace accel::space
