// The reserve on a file system of the agent's records: held as allocated
// blocks, given up for the write that finds the file system full (which then
// succeeds), refusing new jobs while given up, and held again once there is
// room. Each test runs in a child with a mount namespace of its own and a
// 1 MiB tmpfs (nothing stays mounted whatever happens); its exit code names
// the check that failed.
#include "accel/common/space_reserve.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "accel/common/safe_file.h"
#include "temp_dir.h"

namespace accel {
namespace {

// Writes zeros to `path` until the file system is full.
void fill(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  std::string block(4096, '\0');
  while (fd >= 0 && ::write(fd, block.data(), block.size()) > 0) {
  }
  if (fd >= 0) ::close(fd);
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// Runs `body` in a child whose `dir` is a 1 MiB tmpfs; returns its exit code.
template <typename Body>
int onSmallTmpfs(const std::string& dir, Body body) {
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("accel-test", dir.c_str(), "tmpfs", 0, "size=1m") != 0)
      _exit(2);
    _exit(body());
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

class SpaceReserveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  }
  void TearDown() override { (void)tmp_.remove(); }

  support::TempDir tmp_{"accel-space-reserve-test"};
  std::string dir_ = tmp_.path() + "/small";
};

TEST_F(SpaceReserveTest, AWriteThatFindsTheFileSystemFullGetsTheReserveAndNewJobsWait) {
  const std::string dir = dir_;
  const int code = onSmallTmpfs(dir, [&] {
    const std::string reserve = dir + "/" + space::kReserveFile;
    if (!space::hold(dir, 256 * 1024).ok()) return 3;
    struct stat st {};
    if (stat(reserve.c_str(), &st) != 0 || st.st_blocks * 512 < 256 * 1024) return 4;
    // A second directory of the same file system holds nothing more.
    if (mkdir((dir + "/sub").c_str(), 0700) != 0 || !space::hold(dir + "/sub", 256 * 1024).ok() ||
        space::reserves().size() != 1)
      return 5;
    fill(dir + "/filler");
    if (!space::shortage().empty()) return 6;  // full, but the reserve is still held
    // The record fits only once the reserve is given up for it.
    if (!writeFileAtomic(dir + "/sub/record", std::string(64 * 1024, 'r'), 0600).ok()) return 7;
    auto r = space::reserves();
    if (r.size() != 1 || r[0].held || r[0].released_ns == 0 || exists(reserve)) return 8;
    const std::string why = space::shortage();
    if (why.find("the file system holding " + dir + " is full (") != 0 ||
        why.find("ReserveSpace") == std::string::npos)
      return 9;
    // Nothing is left to give: a write too large for what is free fails, naming the file system.
    Status big = writeFileAtomic(dir + "/big", std::string(512 * 1024, 'b'), 0600);
    if (big.ok() || big.error().message().find("is full (") == std::string::npos) return 10;
    // Room again (twice the reserve): held again at the next look, and new jobs are taken.
    if (unlink((dir + "/filler").c_str()) != 0) return 11;
    if (!space::shortage().empty() || !space::reserves()[0].held || !exists(reserve)) return 12;
    return 0;
  });
  EXPECT_EQ(code, 0) << "2: no tmpfs; 3, 4: not held as allocated blocks; 5: a second reserve on "
                        "the same file system; 6: refused while held; 7: the write did not get "
                        "the reserve; 8: the reserve still counts as held; 9: the refusal does "
                        "not name the file system; 10: a write past the reserve did not fail as "
                        "full; 11, 12: not held again once there was room";
}

TEST_F(SpaceReserveTest, AReserveThatCannotBeHeldAtStartRefusesNewJobsUntilThereIsRoom) {
  const std::string dir = dir_;
  const int code = onSmallTmpfs(dir, [&] {
    fill(dir + "/filler");
    if (space::hold(dir, 256 * 1024).ok()) return 3;
    auto r = space::reserves();
    if (r.size() != 1 || r[0].held) return 4;
    if (space::shortage().find("is full (") == std::string::npos) return 5;
    if (exists(dir + "/" + space::kReserveFile + ".new")) return 6;  // no half-made reserve
    if (unlink((dir + "/filler").c_str()) != 0) return 7;
    if (!space::shortage().empty() || !space::reserves()[0].held) return 8;
    return 0;
  });
  EXPECT_EQ(code, 0) << "2: no tmpfs; 3: held on a full file system; 4: counted as held; 5: "
                        "new jobs not refused; 6: a partial reserve file left; 7, 8: not held "
                        "once there was room";
}

}  // namespace
}  // namespace accel
