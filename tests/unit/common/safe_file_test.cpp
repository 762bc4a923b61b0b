#include "accel/common/safe_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "temp_dir.h"

namespace accel {
namespace {

class SafeFileTest : public ::testing::Test {
 protected:
  void TearDown() override { ASSERT_TRUE(tmp_.remove()); }
  support::TempDir tmp_{"accel-safe-file"};
  std::string dir_ = tmp_.path();
};

mode_t modeOf(const std::string& p) {
  struct stat st {};
  EXPECT_EQ(lstat(p.c_str(), &st), 0);
  return st.st_mode & 07777;
}

TEST_F(SafeFileTest, WritesContentWithExactMode) {
  const std::string p = dir_ + "/a.conf";
  umask(0077);
  ASSERT_TRUE(writeFileAtomic(p, "hello\n", 0644).ok());
  EXPECT_EQ(modeOf(p), 0644u);  // umask does not narrow the requested mode
  auto r = readFileNoFollow(p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "hello\n");
  umask(0022);
}

TEST_F(SafeFileTest, ReplacesExistingFileAndLeavesNoTemporaries) {
  const std::string p = dir_ + "/b";
  ASSERT_TRUE(writeFileAtomic(p, "one", 0600).ok());
  ASSERT_TRUE(writeFileAtomic(p, "two", 0600).ok());
  EXPECT_EQ(*readFileNoFollow(p), "two");
  int entries = 0;
  for (auto* d = opendir(dir_.c_str()); d != nullptr;) {
    auto* e = readdir(d);
    if (e == nullptr) {
      closedir(d);
      break;
    }
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST_F(SafeFileTest, SymlinkAtTargetIsReplacedNotFollowed) {
  const std::string victim = dir_ + "/victim";
  ASSERT_TRUE(writeFileAtomic(victim, "keep", 0600).ok());
  const std::string p = dir_ + "/link";
  ASSERT_EQ(symlink(victim.c_str(), p.c_str()), 0);
  ASSERT_TRUE(writeFileAtomic(p, "new", 0600).ok());
  EXPECT_EQ(*readFileNoFollow(victim), "keep");
  EXPECT_EQ(*readFileNoFollow(p), "new");
}

TEST_F(SafeFileTest, ReadRefusesSymlinkAndDirectoryAndOversize) {
  const std::string target = dir_ + "/t";
  ASSERT_TRUE(writeFileAtomic(target, std::string(100, 'x'), 0600).ok());
  ASSERT_EQ(symlink(target.c_str(), (dir_ + "/l").c_str()), 0);
  EXPECT_FALSE(readFileNoFollow(dir_ + "/l").ok());
  EXPECT_FALSE(readFileNoFollow(dir_).ok());
  EXPECT_FALSE(readFileNoFollow(target, 10).ok());
  auto missing = readFileNoFollow(dir_ + "/missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

TEST_F(SafeFileTest, MakeDirectorySetsModeAndRefusesSymlink) {
  const std::string d = dir_ + "/job";
  ASSERT_TRUE(makeDirectory(d, 0700).ok());
  EXPECT_EQ(modeOf(d), 0700u);
  ASSERT_TRUE(makeDirectory(d, 0750).ok());  // existing directory: mode fixed up
  EXPECT_EQ(modeOf(d), 0750u);
  const std::string l = dir_ + "/jl";
  ASSERT_EQ(symlink("/etc", l.c_str()), 0);
  auto s = makeDirectory(l, 0700);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::kConflict);
}

TEST_F(SafeFileTest, RemoveTreeDoesNotFollowLinks) {
  const std::string outside = dir_ + "/outside";
  ASSERT_TRUE(makeDirectory(outside, 0700).ok());
  ASSERT_TRUE(writeFileAtomic(outside + "/precious", "x", 0600).ok());
  const std::string tree = dir_ + "/tree";
  ASSERT_TRUE(makeDirectory(tree, 0700).ok());
  ASSERT_TRUE(makeDirectory(tree + "/sub", 0700).ok());
  ASSERT_TRUE(writeFileAtomic(tree + "/sub/f", "x", 0600).ok());
  ASSERT_EQ(symlink(outside.c_str(), (tree + "/sub/escape").c_str()), 0);
  ASSERT_TRUE(removeTree(tree).ok());
  EXPECT_NE(access(tree.c_str(), F_OK), 0);
  EXPECT_EQ(*readFileNoFollow(outside + "/precious"), "x");
  EXPECT_TRUE(removeTree(tree).ok());  // already gone: success
}

TEST_F(SafeFileTest, RemoveTreeBelowAFileHasNothingToRemove) {
  const std::string file = dir_ + "/not-a-dir";
  ASSERT_TRUE(writeFileAtomic(file, "x", 0600).ok());
  EXPECT_TRUE(removeTree(file + "/42").ok());
  EXPECT_EQ(*readFileNoFollow(file), "x");
}

TEST(SafePathComponentTest, RejectsTraversalAndControlBytes) {
  EXPECT_TRUE(isSafePathComponent("job-42"));
  EXPECT_FALSE(isSafePathComponent(""));
  EXPECT_FALSE(isSafePathComponent(".."));
  EXPECT_FALSE(isSafePathComponent("a/b"));
  EXPECT_FALSE(isSafePathComponent(std::string("a\0b", 3)));
  EXPECT_FALSE(isSafePathComponent("a\nb"));
  EXPECT_FALSE(isSafePathComponent(std::string(256, 'a')));
}

TEST_F(SafeFileTest, ChownAppliesWhenRoot) {
  if (geteuid() != 0) GTEST_FAIL() << "this test must run as root (CI runs as root)";
  const std::string p = dir_ + "/owned";
  ASSERT_TRUE(writeFileAtomic(p, "x", 0600, FileOwner{4242, 4343}).ok());
  struct stat st {};
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4242u);
  EXPECT_EQ(st.st_gid, 4343u);
}

// A write that fails for lack of space names the full file system and what
// it has left. A 64 KiB tmpfs, mounted in a mount namespace of a child's own
// (nothing is left mounted whatever happens), is filled by a 1 MiB write.
TEST_F(SafeFileTest, AFullFileSystemIsNamedInTheError) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const std::string small = dir_ + "/small";
  ASSERT_EQ(mkdir(small.c_str(), 0700), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("accel-test", small.c_str(), "tmpfs", 0, "size=64k") != 0)
      _exit(2);
    Status s = writeFileAtomic(small + "/big", std::string(1 << 20, 'x'), 0600);
    if (s.ok()) _exit(3);
    const std::string want = "the file system holding " + small + " is full (";
    if (s.error().message().find(want) == std::string::npos) _exit(4);
    if (s.error().message().find("KiB and ") == std::string::npos) _exit(5);
    // The partial file is gone: the next write that fits still works.
    _exit(writeFileAtomic(small + "/fits", "ok", 0600).ok() ? 0 : 6);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no tmpfs; 3: the write fit; 4, 5: the error names no "
                                       "file system; 6: the space was not given back";
}

}  // namespace
}  // namespace accel
