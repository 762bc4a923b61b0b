#include "accel/agentd/trash_remover.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "accel/agent/job_dir_step.h"
#include "accel/common/safe_file.h"
#include "temp_dir.h"

namespace accel::agentd {
namespace {

using namespace std::chrono_literals;

bool exists(const std::string& p) {
  struct stat st {};
  return lstat(p.c_str(), &st) == 0;
}

size_t entriesIn(const std::string& dir) {
  size_t n = 0;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  while (dirent* e = readdir(d))
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") ++n;
  closedir(d);
  return n;
}

// A user's job directory: `levels` nested directories with `files` files
// at the top and a link to `victim`.
void makeUserTree(const std::string& top, int levels, int files, const std::string& victim) {
  ASSERT_EQ(mkdir(top.c_str(), 0700), 0);
  for (int f = 0; f < files; ++f) {
    const std::string name = top + "/f" + std::to_string(f);
    if (f > 0) {  // links to the first: entries without the cost of new inodes
      ASSERT_EQ(link((top + "/f0").c_str(), name.c_str()), 0);
      continue;
    }
    int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
  }
  ASSERT_EQ(symlink(victim.c_str(), (top + "/victim").c_str()), 0);
  int fd = open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (int i = 0; i < levels; ++i) {
    ASSERT_EQ(mkdirat(fd, "d", 0700), 0);
    int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    close(fd);
    fd = next;
  }
  close(fd);
  ASSERT_EQ(chown(top.c_str(), 54321, 54321), 0);
}

class TrashRemoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_FAIL() << "this test must run as root (CI runs as root)";
    jobs_ = dir_ + "/jobs";
    ipuof_ = dir_ + "/ipuof";
    victim_ = dir_ + "/victim";
    for (const auto& d : {jobs_, ipuof_, victim_}) ASSERT_EQ(mkdir(d.c_str(), 0755), 0);
    int fd = open((victim_ + "/data").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    close(fd);
  }
  void TearDown() override { EXPECT_TRUE(tmp_.remove()); }
  std::unique_ptr<TrashRemover> make(std::chrono::milliseconds retry = 60s) {
    TrashRemover::Options o;
    o.retry = retry;
    auto r = TrashRemover::create(
        {jobs_, ipuof_}, o,
        [this](const std::string& path, const Status& s, const RemoveTreeStats& st,
               std::chrono::milliseconds) {
          std::lock_guard<std::mutex> g(mu_);
          reports_.push_back(
              path + (s.ok() ? ": ok " + std::to_string(st.removed) : ": " + s.error().message()));
        });
    EXPECT_TRUE(r.ok()) << r.error().message();
    return r.ok() ? std::move(*r) : nullptr;
  }
  support::TempDir tmp_{"accel-trash"};
  std::string dir_ = tmp_.path(), jobs_, ipuof_, victim_;
  std::mutex mu_;
  std::vector<std::string> reports_;
};

TEST_F(TrashRemoverTest, DisposeIsARenameAndTheThreadRemovesTheTree) {
  auto trash = make();
  ASSERT_NE(trash, nullptr);
  struct stat st {};
  ASSERT_EQ(stat((ipuof_ + "/.trash").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);  // no user reaches a tree once it is there
  makeUserTree(ipuof_ + "/42", 3000, 5000, victim_);
  const auto began = std::chrono::steady_clock::now();
  ASSERT_TRUE(trash->dispose(ipuof_ + "/42").ok());
  const auto took = std::chrono::steady_clock::now() - began;
  EXPECT_FALSE(exists(ipuof_ + "/42"));
  EXPECT_EQ(entriesIn(ipuof_ + "/.trash"), 1u);  // moved, not yet removed: no thread runs
  std::printf("dispose of a tree of 8,000 entries: %.3f ms\n",
              std::chrono::duration<double, std::milli>(took).count());
  trash->start();
  ASSERT_TRUE(trash->waitEmpty(120s));
  EXPECT_EQ(entriesIn(ipuof_ + "/.trash"), 0u);
  EXPECT_TRUE(exists(victim_ + "/data"));
  std::lock_guard<std::mutex> g(mu_);
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_NE(reports_[0].find(": ok 8002"), std::string::npos)
      << reports_[0];  // 5000 + link + 3000 + top
}

TEST_F(TrashRemoverTest, MissingDirectoryAndPathsOutsideTheRoots) {
  auto trash = make();
  ASSERT_NE(trash, nullptr);
  EXPECT_TRUE(trash->dispose(jobs_ + "/7").ok());
  Status outside = trash->dispose(victim_ + "/data");
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(exists(victim_ + "/data"));
}

// What a stopped daemon left in the trash, moved aside or half removed, is
// removed by the next one as soon as it starts.
TEST_F(TrashRemoverTest, TrashLeftByAnEarlierProcessIsRemovedAtStart) {
  {
    auto first = make();
    ASSERT_NE(first, nullptr);
    makeUserTree(jobs_ + "/1", 10, 10, victim_);
    makeUserTree(ipuof_ + "/2", 5000, 20'000, victim_);
    ASSERT_TRUE(first->dispose(jobs_ + "/1").ok());
    ASSERT_TRUE(first->dispose(ipuof_ + "/2").ok());
    first->start();
    // Destroyed at once: stopped wherever it got to.
  }
  auto second = make();
  ASSERT_NE(second, nullptr);
  second->start();
  ASSERT_TRUE(second->waitEmpty(120s));
  EXPECT_EQ(entriesIn(jobs_ + "/.trash"), 0u);
  EXPECT_EQ(entriesIn(ipuof_ + "/.trash"), 0u);
  EXPECT_TRUE(exists(victim_ + "/data"));
}

// A tree that cannot be removed yet stays in the trash, is reported, and
// is tried again after the retry interval.
TEST_F(TrashRemoverTest, FailedRemovalIsReportedAndRetried) {
  auto trash = make(50ms);
  ASSERT_NE(trash, nullptr);
  makeUserTree(jobs_ + "/9", 1, 1, victim_);
  // An immutable file (chattr +i): not even root may unlink it.
  int fd = open((jobs_ + "/9/f0").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  int flags = 0;
  ASSERT_EQ(ioctl(fd, FS_IOC_GETFLAGS, &flags), 0);
  flags |= FS_IMMUTABLE_FL;
  ASSERT_EQ(ioctl(fd, FS_IOC_SETFLAGS, &flags), 0)
      << "the file system of /tmp must support chattr +i";
  ASSERT_TRUE(trash->dispose(jobs_ + "/9").ok());
  trash->start();
  EXPECT_FALSE(trash->waitEmpty(300ms));
  {
    std::lock_guard<std::mutex> g(mu_);
    ASSERT_GE(reports_.size(), 2u);  // tried, and tried again
    EXPECT_NE(reports_[0].find("/f0: Operation not permitted"), std::string::npos) << reports_[0];
  }
  flags &= ~FS_IMMUTABLE_FL;
  ASSERT_EQ(ioctl(fd, FS_IOC_SETFLAGS, &flags), 0);
  close(fd);
  ASSERT_TRUE(trash->waitEmpty(10s));
  EXPECT_EQ(entriesIn(jobs_ + "/.trash"), 0u);
}

TEST_F(TrashRemoverTest, JobDirStepHandsItsDirectoriesToTheTrash) {
  auto trash = make();
  ASSERT_NE(trash, nullptr);
  agent::JobDirStep step(jobs_, ipuof_, [&](const std::string& p) { return trash->dispose(p); });
  agent::JobRecord job;
  job.spec.job_id = 77;
  job.spec.uid = 54321;
  job.spec.gid = 54321;
  job.spec.ipus = 1;
  // A leftover of an earlier attempt is moved aside, not removed in the prolog.
  makeUserTree(ipuof_ + "/77", 2000, 10, victim_);
  ASSERT_TRUE(step.setUp(job).ok());
  EXPECT_EQ(job.job_dir, ipuof_ + "/77");
  EXPECT_EQ(entriesIn(ipuof_ + "/77"), 0u);
  EXPECT_EQ(entriesIn(ipuof_ + "/.trash"), 1u);
  ASSERT_TRUE(step.tearDown(job).ok());
  EXPECT_FALSE(exists(ipuof_ + "/77"));
  EXPECT_EQ(entriesIn(ipuof_ + "/.trash"), 2u);
  trash->start();
  ASSERT_TRUE(trash->waitEmpty(60s));
  EXPECT_TRUE(exists(victim_ + "/data"));
}

}  // namespace
}  // namespace accel::agentd
