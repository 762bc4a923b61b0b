// The spool on a file system that fills up: with a reserve held there
// (space_reserve.h) the record that finds it full gets the reserve and is
// stored whole; without one the append fails and leaves no torn record.
// Runs in a child with a mount namespace of its own and a 1 MiB tmpfs; its
// exit code names the check that failed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accel/common/space_reserve.h"
#include "accel/events/spool.h"
#include "temp_dir.h"

namespace accel::event {
namespace {

void fill(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  std::string block(4096, '\0');
  while (fd >= 0 && ::write(fd, block.data(), block.size()) > 0) {
  }
  if (fd >= 0) ::close(fd);
}

TEST(SpoolSpaceTest, ARecordThatFindsTheFileSystemFullGetsTheReserve) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  support::TempDir tmp{"accel-spool-space-test"};
  const std::string dir = tmp.path() + "/small";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("accel-test", dir.c_str(), "tmpfs", 0, "size=1m") != 0)
      _exit(2);
    auto spool = Spool::open({dir + "/spool", 4 << 20, 4 << 20});
    if (!spool.ok()) _exit(3);
    if (!space::hold(dir, 256 * 1024).ok()) _exit(4);
    fill(dir + "/filler");
    const std::vector<uint8_t> record(16 * 1024, 7);
    auto first = (*spool)->append({1, 1, Priority::kLifecycle}, record);
    if (!first.ok() || *first != Appended::kStored) _exit(5);
    if (space::reserves()[0].held) _exit(6);
    // No reserve left: records go in until one finds the file system full,
    // and the spool still reads exactly those stored before it.
    uint64_t stored = 1;
    while (stored < 40) {
      auto next = (*spool)->append({1, stored + 1, Priority::kLifecycle},
                                   std::vector<uint8_t>(60 * 1024, uint8_t(stored + 1)));
      if (!next.ok()) break;
      ++stored;
    }
    if (stored == 40) _exit(7);
    if (!(*spool)->sync().ok()) _exit(10);  // the sender reads what is synced
    SpoolPos pos = (*spool)->head();
    for (uint64_t seq = 1; seq <= stored; ++seq) {
      auto r = (*spool)->next(pos);
      if (!r.ok() || !*r || (*r)->meta.seq != seq) _exit(8);
      if (seq == 1 ? (*r)->payload != record : (*r)->payload.size() != 60 * 1024) _exit(8);
    }
    auto end = (*spool)->next(pos);
    if (!end.ok() || *end) _exit(9);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "2: no tmpfs; 3: no spool; 4: no reserve; 5: the record did not get the reserve; 6: "
         "the reserve still held; 7: the file system never filled; 8, 9: the spool does not read "
         "back exactly the stored records; 10: no sync";
}

}  // namespace
}  // namespace accel::event
