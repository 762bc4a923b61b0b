#include "temp_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace accel::support {
namespace {

namespace fs = std::filesystem;

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

TEST(TempDirTest, MakesAPrivateDirectoryNamedAfterThePrefixAndRemovesItsTree) {
  std::string path;
  {
    TempDir dir("accel-tempdir-test");
    path = dir.path();
    EXPECT_EQ(fs::path(path).filename().string().rfind("accel-tempdir-test-", 0), 0u) << path;
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(dir.file("a/b"), path + "/a/b");
    fs::create_directories(dir.file("a/b"));
    std::ofstream(dir.file("a/b/c")) << "x";
  }
  EXPECT_FALSE(exists(path));
}

TEST(TempDirTest, TwoAreNeverTheSame) {
  TempDir a, b;
  EXPECT_NE(a.path(), b.path());
}

TEST(TempDirTest, FollowsTmpdirAndTakesAParent) {
  TempDir parent("accel-tempdir-parent");
  {
    TempDir inside("x", parent.path());
    EXPECT_EQ(fs::path(inside.path()).parent_path().string(), parent.path());
  }
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("TMPDIR", parent.path().c_str(), 1);
  std::string made;
  {
    TempDir under("y");
    made = under.path();
  }
  if (old != nullptr)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  EXPECT_EQ(fs::path(made).parent_path().string(), parent.path());
  EXPECT_FALSE(exists(made));
}

// A test that takes its own permissions away (to provoke EACCES) leaves a
// tree its owner could not empty as it is.
TEST(TempDirTest, RemovesDirectoriesTheTestMadeReadOnlyOrClosed) {
  TempDir dir("accel-tempdir-test");
  fs::create_directories(dir.file("ro/deeper"));
  std::ofstream(dir.file("ro/deeper/f")) << "x";
  fs::create_directories(dir.file("closed"));
  std::ofstream(dir.file("closed/g")) << "x";
  ASSERT_EQ(::chmod(dir.file("ro/deeper").c_str(), 0555), 0);
  ASSERT_EQ(::chmod(dir.file("ro").c_str(), 0555), 0);
  ASSERT_EQ(::chmod(dir.file("closed").c_str(), 0), 0);
  const std::string path = dir.path();
  EXPECT_TRUE(dir.remove());
  EXPECT_FALSE(exists(path));
  EXPECT_TRUE(dir.path().empty());
  EXPECT_TRUE(dir.remove()) << "removing again is no error";
}

// A symlink in the tree is removed, never followed.
TEST(TempDirTest, LeavesWhatASymlinkPointsTo) {
  TempDir outside("accel-tempdir-outside");
  std::ofstream(outside.file("keep")) << "x";
  ASSERT_EQ(::chmod(outside.path().c_str(), 0500), 0);
  {
    TempDir dir("accel-tempdir-test");
    fs::create_directory_symlink(outside.path(), dir.file("link"));
  }
  EXPECT_TRUE(exists(outside.file("keep")));
  struct stat st {};
  ASSERT_EQ(::stat(outside.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0500u) << "its mode was not touched either";
}

TEST(TempDirTest, AMovedFromDirectoryOwnsNothing) {
  TempDir a("accel-tempdir-test");
  const std::string path = a.path();
  TempDir b(std::move(a));
  EXPECT_TRUE(a.path().empty());
  EXPECT_TRUE(a.remove());
  EXPECT_TRUE(exists(path));
  TempDir c("accel-tempdir-test");
  const std::string other = c.path();
  c = std::move(b);
  EXPECT_FALSE(exists(other)) << "the directory it held before is removed";
  EXPECT_EQ(c.path(), path);
}

TEST(TempDirTest, AParentThatCannotHoldItThrows) {
  EXPECT_THROW(TempDir("x", "/nonexistent-parent-of-accel-tests"), std::runtime_error);
}

}  // namespace
}  // namespace accel::support
