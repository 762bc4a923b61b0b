// removeTree on trees a hostile user could build: wide, deep, full of links,
// FIFOs and unreadable entries, changing while they are removed; and the
// checks of the directories such trees live in.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "accel/common/safe_file.h"

namespace accel {
namespace {

using Clock = std::chrono::steady_clock;

bool exists(const std::string& p) {
  struct stat st {};
  return lstat(p.c_str(), &st) == 0;
}

void touchAt(int dirfd, const std::string& name, mode_t mode = 0644) {
  int fd = openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  ASSERT_GE(fd, 0) << name;
  close(fd);
}

void touch(const std::string& path, mode_t mode = 0644) { touchAt(AT_FDCWD, path, mode); }

// A hard link to `seed` named `name` in `dirfd`: an entry like any file's,
// made without allocating an inode (creating 100,000 inodes takes minutes
// on a busy disk; unlinking costs about the same either way).
void linkAt(const std::string& seed, int dirfd, const std::string& name) {
  ASSERT_EQ(linkat(AT_FDCWD, seed.c_str(), dirfd, name.c_str(), 0), 0) << name;
}

// A chain of `levels` directories "d" below `top` (top/d/d/...), with
// `files_each` files in every one; the paths are longer than PATH_MAX, so
// it is built through descriptors.
void makeChain(const std::string& top, int levels, int files_each = 0) {
  ASSERT_EQ(mkdir(top.c_str(), 0755), 0);
  int fd = open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::string seed = top + "/f0";
  if (files_each > 0) touch(seed);
  for (int i = 0; i < levels; ++i) {
    for (int f = i == 0 ? 1 : 0; f < files_each; ++f) linkAt(seed, fd, "f" + std::to_string(f));
    ASSERT_EQ(mkdirat(fd, "d", 0755), 0) << "level " << i;
    int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(next, 0);
    close(fd);
    fd = next;
  }
  close(fd);
}

int openFds() {
  int n = 0;
  for (int fd = 0; fd < 4096; ++fd)
    if (fcntl(fd, F_GETFD) >= 0) ++n;
  return n;
}

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

class RemoveTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_FAIL() << "this test must run as root (CI runs as root)";
    char tmpl[] = "/tmp/accel-remove-tree-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    tree_ = dir_ + "/tree";
    outside_ = dir_ + "/outside";
    ASSERT_EQ(mkdir(outside_.c_str(), 0755), 0);
    touch(outside_ + "/keep");
  }
  void TearDown() override {
    if (!dir_.empty()) {
      EXPECT_TRUE(removeTree(dir_).ok());
    }
  }
  std::string dir_, tree_, outside_;
};

TEST_F(RemoveTreeTest, RemovesAHundredThousandEntries) {
  // 1,000 directories of 99 files each, plus one flat directory of 1,000
  // files (in each directory one file of its own, the others links to it:
  // ext4 allows 65,000 links to a file).
  ASSERT_EQ(mkdir(tree_.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((tree_ + "/flat").c_str(), 0755), 0);
  const std::string seed = tree_ + "/flat/seed";
  touch(seed);
  int top = open(tree_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (int d = 0; d < 1000; ++d) {
    const std::string name = "dir" + std::to_string(d);
    ASSERT_EQ(mkdirat(top, name.c_str(), 0755), 0);
    int sub = openat(top, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    touchAt(sub, "file0");
    const std::string first = tree_ + "/" + name + "/file0";
    for (int f = 1; f < 99; ++f) linkAt(first, sub, "file" + std::to_string(f));
    close(sub);
  }
  close(top);
  int flat = open((tree_ + "/flat").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (int f = 0; f < 998; ++f) linkAt(seed, flat, std::to_string(f));
  close(flat);
  const int fds_before = openFds();
  RemoveTreeStats stats;
  const auto began = Clock::now();
  Status s = removeTree(tree_, {}, &stats);
  const double took = secondsSince(began);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_FALSE(exists(tree_));
  EXPECT_EQ(stats.removed, 1000u * 100 + 1000 + 1);
  EXPECT_EQ(stats.max_depth, 2u);
  EXPECT_EQ(openFds(), fds_before);
  EXPECT_TRUE(exists(outside_ + "/keep"));
  std::printf("removed %llu entries in %.3f s\n", static_cast<unsigned long long>(stats.removed),
              took);
  RecordProperty("seconds", std::to_string(took));
}

// In a child whose RLIMIT_NOFILE leaves `spare_fds` descriptors beyond
// those already open: the walk must fit (and survive EMFILE if it does not).
// The child writes its figures to a pipe; its exit code says how it went.
struct ChildOutcome {
  int exit_code = -1;
  RemoveTreeStats stats;
  double seconds = 0;
};

ChildOutcome removeInChildWithFdLimit(const std::string& path, int spare_fds, int max_open_dirs) {
  int pipefd[2];
  EXPECT_EQ(pipe(pipefd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipefd[0]);
    const rlim_t limit = static_cast<rlim_t>(openFds() + spare_fds);
    rlimit rl{limit, limit};
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) _exit(3);
    RemoveTreeOptions o;
    o.max_open_dirs = max_open_dirs;
    ChildOutcome out;
    const auto began = Clock::now();
    Status s = removeTree(path, o, &out.stats);
    out.seconds = secondsSince(began);
    if (write(pipefd[1], &out, sizeof out) != static_cast<ssize_t>(sizeof out)) _exit(4);
    _exit(s.ok() && !exists(path) ? 0 : 1);
  }
  close(pipefd[1]);
  ChildOutcome out;
  if (read(pipefd[0], &out, sizeof out) != static_cast<ssize_t>(sizeof out)) out = ChildOutcome{};
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

// 10,000 levels, a file in each, in a child that may open only the parent
// and 16 directories more: no recursion, no descriptor per level.
TEST_F(RemoveTreeTest, RemovesTenThousandLevelsWithinALowDescriptorLimit) {
  makeChain(tree_, 10'000, 1);
  ChildOutcome out = removeInChildWithFdLimit(tree_, 1 + RemoveTreeOptions{}.max_open_dirs,
                                              RemoveTreeOptions{}.max_open_dirs);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_FALSE(exists(tree_));
  EXPECT_EQ(out.stats.max_depth, 10'001u);
  EXPECT_EQ(out.stats.removed, 10'001u + 10'000u);
  EXPECT_LE(out.stats.max_open_dirs, RemoveTreeOptions{}.max_open_dirs);
  std::printf("removed %d levels in %.3f s, at most %d directories open\n", 10'000, out.seconds,
              out.stats.max_open_dirs);
  RecordProperty("seconds", std::to_string(out.seconds));
}

TEST_F(RemoveTreeTest, DeepTreeSurvivesRunningOutOfDescriptors) {
  makeChain(tree_, 2'000);
  // Only 4 spare descriptors but 16 allowed: openat fails with EMFILE on the
  // way down, the ancestors are closed, and the walk goes on.
  ChildOutcome out = removeInChildWithFdLimit(tree_, 4, 16);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_LT(out.stats.max_open_dirs, 16);  // the limit, not the option, bounded it
  EXPECT_FALSE(exists(tree_));
}

TEST_F(RemoveTreeTest, LinksToOutsideAreRemovedNeverFollowed) {
  makeChain(tree_, 100);
  ASSERT_EQ(mkdir((outside_ + "/sub").c_str(), 0755), 0);
  touch(outside_ + "/sub/inner");
  ASSERT_EQ(symlink(outside_.c_str(), (tree_ + "/to-dir").c_str()), 0);
  ASSERT_EQ(symlink((outside_ + "/keep").c_str(), (tree_ + "/to-file").c_str()), 0);
  ASSERT_EQ(symlink("/", (tree_ + "/to-root").c_str()), 0);
  ASSERT_EQ(symlink("..", (tree_ + "/d/up").c_str()), 0);
  // Deep below, past the levels that stay open: a link named like a directory.
  std::string deep = tree_;
  for (int i = 0; i < 40; ++i) deep += "/d";
  ASSERT_EQ(symlink(outside_.c_str(), (deep + "/x").c_str()), 0);
  Status s = removeTree(tree_);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_FALSE(exists(tree_));
  EXPECT_TRUE(exists(outside_ + "/keep"));
  EXPECT_TRUE(exists(outside_ + "/sub/inner"));
}

TEST_F(RemoveTreeTest, TopThatIsALinkIsRemovedAsALink) {
  ASSERT_EQ(symlink(outside_.c_str(), tree_.c_str()), 0);
  ASSERT_TRUE(removeTree(tree_).ok());
  EXPECT_FALSE(exists(tree_));
  EXPECT_TRUE(exists(outside_ + "/keep"));
}

TEST_F(RemoveTreeTest, FifosSocketsAndEntriesWithoutPermissions) {
  ASSERT_EQ(mkdir(tree_.c_str(), 0755), 0);
  ASSERT_EQ(mkfifo((tree_ + "/fifo").c_str(), 0600), 0);
  int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s/sock", tree_.c_str());
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  close(sock);
  touch(tree_ + "/no-perms", 0000);
  // A directory of mode 000 holding files, and one owned by another user.
  ASSERT_EQ(mkdir((tree_ + "/locked").c_str(), 0755), 0);
  touch(tree_ + "/locked/a");
  ASSERT_EQ(mkdir((tree_ + "/locked/deeper").c_str(), 0755), 0);
  touch(tree_ + "/locked/deeper/b");
  ASSERT_EQ(chmod((tree_ + "/locked/deeper").c_str(), 0000), 0);
  ASSERT_EQ(chmod((tree_ + "/locked").c_str(), 0000), 0);
  ASSERT_EQ(mkdir((tree_ + "/theirs").c_str(), 0700), 0);
  touch(tree_ + "/theirs/c", 0600);
  ASSERT_EQ(chown((tree_ + "/theirs/c").c_str(), 54321, 54321), 0);
  ASSERT_EQ(chown((tree_ + "/theirs").c_str(), 54321, 54321), 0);
  ASSERT_EQ(mkdir((tree_ + "/sticky").c_str(), 01777), 0);
  touch(tree_ + "/sticky/d");
  ASSERT_EQ(chown((tree_ + "/sticky/d").c_str(), 54321, 54321), 0);
  Status s = removeTree(tree_);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_FALSE(exists(tree_));
}

// A file system mounted inside the tree (in a private mount namespace of a
// child) is neither entered nor unmounted; everything else goes.
TEST_F(RemoveTreeTest, NeverLeavesTheTreesFileSystem) {
  makeChain(tree_, 3, 2);
  pid_t pid = fork();
  if (pid == 0) {
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      _exit(10);
    if (mount("none", (tree_ + "/d").c_str(), "tmpfs", 0, nullptr) != 0) _exit(11);
    int fd = open((tree_ + "/d/on-the-mount").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) _exit(12);
    close(fd);
    Status s = removeTree(tree_);
    const bool reported =
        !s.ok() &&
        s.error().message().find("another file system is mounted there") != std::string::npos;
    const bool kept = exists(tree_ + "/d/on-the-mount") && !exists(tree_ + "/f0");
    _exit(reported && kept ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "10-12: could not set up the mount; 1: the walk entered it or reported nothing";
  ASSERT_TRUE(removeTree(tree_).ok());  // unmounted with the child's namespace
  EXPECT_FALSE(exists(tree_));
}

// Entries added after a directory was listed (a user's process still
// running in it): the directory is listed again until it can be removed.
TEST_F(RemoveTreeTest, EntriesAddedDuringRemovalAreRemovedToo) {
  ASSERT_EQ(mkdir(tree_.c_str(), 0755), 0);
  touch(dir_ + "/seed");
  for (int f = 0; f < 1500; ++f) linkAt(dir_ + "/seed", AT_FDCWD, tree_ + "/f" + std::to_string(f));
  ASSERT_EQ(mkdir((tree_ + "/late").c_str(), 0755), 0);
  int calls = 0;
  RemoveTreeOptions o;
  o.stop = [&] {
    if (calls++ == 0) {  // after the first batch of the top directory
      touch(tree_ + "/added-file");
      EXPECT_EQ(mkdir((tree_ + "/added-dir").c_str(), 0755), 0);
      touch(tree_ + "/added-dir/x");
      touch(tree_ + "/late/y");
    }
    return false;
  };
  Status s = removeTree(tree_, o);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_GE(calls, 1);
  EXPECT_FALSE(exists(tree_));
}

// A process of the user keeps turning one name into a file and a directory
// while the tree goes (EISDIR, ENOTDIR, ENOTEMPTY on the way). The removal
// ends either way, touches nothing outside, and once the process has
// stopped a second call finishes the tree.
TEST_F(RemoveTreeTest, RacingCreatorInsideTheTreeIsHandled) {
  makeChain(tree_, 50, 20);
  int inside = open((tree_ + "/d/d").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(inside, 0);
  std::atomic<bool> stop{false};
  std::thread racer([&] {
    for (int i = 0; !stop; ++i) {
      const std::string name = "r" + std::to_string(i % 8);
      if (mkdirat(inside, name.c_str(), 0755) == 0) {
        int fd = openat(inside, (name + "/in").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) close(fd);
      } else {
        unlinkat(inside, (name + "/in").c_str(), 0);
        unlinkat(inside, name.c_str(), AT_REMOVEDIR);
        int fd = openat(inside, name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) close(fd);
        unlinkat(inside, name.c_str(), 0);
      }
    }
  });
  Status first = removeTree(tree_);
  stop = true;
  racer.join();
  close(inside);
  if (!first.ok()) {
    EXPECT_EQ(first.error().code(), ErrorCode::kConflict) << first.error().message();
  }
  Status second = removeTree(tree_);
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_FALSE(exists(tree_));
  EXPECT_TRUE(exists(outside_ + "/keep"));
}

// A directory moved out of the tree while it is removed: its own contents
// go (they were the tree's), but the walk never climbs out through "..":
// the directory it was moved into keeps everything else.
TEST_F(RemoveTreeTest, DirectoryMovedOutDuringRemovalIsNotClimbedOutOf) {
  makeChain(tree_, 40);
  std::string bottom = tree_;
  for (int i = 0; i < 40; ++i) bottom += "/d";
  touch(dir_ + "/seed");
  for (int f = 0; f < 1200; ++f)
    linkAt(dir_ + "/seed", AT_FDCWD, bottom + "/file-with-a-longish-name-" + std::to_string(f));
  std::string level20 = tree_;
  for (int i = 0; i < 20; ++i) level20 += "/d";
  bool moved = false;
  RemoveTreeOptions o;
  o.stop = [&] {
    if (!moved) {  // while listing the bottom, far below level 20's closed descriptor
      moved = true;
      EXPECT_EQ(rename(level20.c_str(), (outside_ + "/moved").c_str()), 0);
    }
    return false;
  };
  Status first = removeTree(tree_, o);
  ASSERT_TRUE(moved);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().code(), ErrorCode::kConflict) << first.error().message();
  EXPECT_TRUE(exists(outside_ + "/keep"));
  EXPECT_TRUE(exists(outside_ + "/moved"));  // reached only through the tree, never through ".."
  Status second = removeTree(tree_);
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_FALSE(exists(tree_));
  EXPECT_TRUE(exists(outside_ + "/keep"));
}

TEST_F(RemoveTreeTest, StoppedRemovalLeavesTheRestForALaterCall) {
  ASSERT_EQ(mkdir(tree_.c_str(), 0755), 0);
  touch(dir_ + "/seed");
  for (int f = 0; f < 1500; ++f) linkAt(dir_ + "/seed", AT_FDCWD, tree_ + "/f" + std::to_string(f));
  RemoveTreeOptions o;
  o.stop = [] { return true; };
  Status first = removeTree(tree_, o);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().code(), ErrorCode::kTimeout);
  EXPECT_TRUE(exists(tree_));
  ASSERT_TRUE(removeTree(tree_).ok());
  EXPECT_FALSE(exists(tree_));
}

// Climbing back out of a deep chain (rmdir after rmdir, no entry listed)
// still asks `stop`: a daemon told to stop during it stops.
TEST_F(RemoveTreeTest, StopIsAskedWhileClimbingOutOfADeepChain) {
  makeChain(tree_, 1500);
  int calls = 0;
  RemoveTreeOptions o;
  o.stop = [&] {
    return ++calls == 2;
  };  // the first call comes on the way down, the second on the way up
  RemoveTreeStats stats;
  Status s = removeTree(tree_, o, &stats);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::kTimeout);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(stats.max_depth, 1501u);
  EXPECT_GT(stats.removed, 0u);
  EXPECT_LT(stats.removed, 1501u);
  ASSERT_TRUE(removeTree(tree_).ok());
  EXPECT_FALSE(exists(tree_));
}

TEST_F(RemoveTreeTest, MoveAsideRenamesUnderFreshNames) {
  const std::string trash = dir_ + "/trash";
  ASSERT_EQ(mkdir(trash.c_str(), 0700), 0);
  makeChain(tree_, 3);
  auto first = moveAside(tree_, trash);
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_FALSE(exists(tree_));
  EXPECT_TRUE(exists(*first + "/d/d/d"));
  EXPECT_EQ(first->rfind(trash + "/tree.", 0), 0u) << *first;
  makeChain(tree_, 1);
  auto second = moveAside(tree_, trash);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(*first, *second);
  auto missing = moveAside(tree_, trash);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, "");
  // A link is moved as a link.
  ASSERT_EQ(symlink(outside_.c_str(), tree_.c_str()), 0);
  auto link = moveAside(tree_, trash);
  ASSERT_TRUE(link.ok());
  struct stat st {};
  ASSERT_EQ(lstat(link->c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_TRUE(exists(outside_ + "/keep"));
}

TEST_F(RemoveTreeTest, RootOnlyDirectoryCheck) {
  const std::string ok = dir_ + "/ipuof";
  ASSERT_EQ(mkdir(ok.c_str(), 0755), 0);
  EXPECT_TRUE(checkRootOnlyDirectory(ok).ok());  // below /tmp: writable by all, but sticky
  EXPECT_TRUE(checkRootOnlyDirectory(ok + "/").ok());

  ASSERT_EQ(chmod(ok.c_str(), 0775), 0);
  Status group = checkRootOnlyDirectory(ok);
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(group.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(group.error().message().find("writable by its group (mode 0775)"), std::string::npos)
      << group.error().message();
  ASSERT_EQ(chmod(ok.c_str(), 01777), 0);  // sticky is no excuse for the directory itself
  EXPECT_FALSE(checkRootOnlyDirectory(ok).ok());
  ASSERT_EQ(chmod(ok.c_str(), 0755), 0);

  ASSERT_EQ(chown(ok.c_str(), 54321, 0), 0);
  Status owner = checkRootOnlyDirectory(ok);
  ASSERT_FALSE(owner.ok());
  EXPECT_NE(owner.error().message().find("owned by uid 54321"), std::string::npos)
      << owner.error().message();
  ASSERT_EQ(chown(ok.c_str(), 0, 0), 0);

  const std::string link = dir_ + "/link";
  ASSERT_EQ(symlink(ok.c_str(), link.c_str()), 0);
  Status l = checkRootOnlyDirectory(link);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error().message().find("symbolic link"), std::string::npos);

  // Below a directory anyone may write to (without the sticky bit), anyone
  // could put another directory in its place.
  const std::string open_dir = dir_ + "/open";
  ASSERT_EQ(mkdir(open_dir.c_str(), 0755), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
  ASSERT_EQ(mkdir((open_dir + "/ipuof").c_str(), 0755), 0);
  Status above = checkRootOnlyDirectory(open_dir + "/ipuof");
  ASSERT_FALSE(above.ok());
  EXPECT_NE(above.error().message().find("the directory above it, " + open_dir +
                                         ", is writable by others"),
            std::string::npos)
      << above.error().message();

  EXPECT_EQ(checkRootOnlyDirectory(dir_ + "/missing").error().code(), ErrorCode::kNotFound);
  EXPECT_FALSE(checkRootOnlyDirectory("relative/path").ok());
}

}  // namespace
}  // namespace accel
