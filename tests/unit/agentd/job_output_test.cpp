// The idle notice's way into a job's output file (job_output.h): appended to
// a regular file only, never through a symlink, never waiting on a FIFO,
// never creating a file; and the drop to the job's user, in a child process.
#include "accel/agentd/job_output.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "temp_dir.h"

namespace accel::agentd {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(JobOutput, TheLineIsAppendedToARegularFile) {
  support::TempDir dir("job-output");
  const std::string out = dir.path() + "/slurm-42.out";
  std::ofstream(out) << "step 1 done\n";
  ASSERT_TRUE(appendLineToFile(out, "accel: job 42: idle").ok());
  EXPECT_EQ(slurp(out), "step 1 done\naccel: job 42: idle\n");
}

TEST(JobOutput, NoSymlinkNoFifoNoNewFileNoRelativePath) {
  support::TempDir dir("job-output");
  const std::string target = dir.path() + "/secret";
  std::ofstream(target) << "keep\n";
  const std::string link = dir.path() + "/slurm-42.out";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  auto s = appendLineToFile(link, "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument) << s.error().message();
  EXPECT_EQ(slurp(target), "keep\n") << "nothing written through the link";

  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  s = appendLineToFile(fifo, "x");  // no reader: refused at once, not a wait
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument) << s.error().message();

  s = appendLineToFile(dir.path() + "/none.out", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(access((dir.path() + "/none.out").c_str(), F_OK), 0) << "never created";
  EXPECT_FALSE(appendLineToFile("slurm-42.out", "x").ok());
  EXPECT_FALSE(appendLineToFile(dir.path(), "x").ok()) << "a directory";
}

// As root: a child that became nobody cannot write root's file, and can
// write its own; a root job is refused. Skipped only where the test is not
// root (it cannot change users there).
TEST(JobOutput, TheChildBecomesTheJobsUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to change users";
  support::TempDir dir("job-output", "/tmp");
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  const std::string roots = dir.path() + "/root.out";
  const std::string users = dir.path() + "/user.out";
  std::ofstream(roots) << "";
  std::ofstream(users) << "";
  ASSERT_EQ(chmod(roots.c_str(), 0644), 0);
  ASSERT_EQ(chown(users.c_str(), 65534, 65534), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!becomeJobUser(65534, 65534).ok()) _exit(10);
    if (appendLineToFile(roots, "x").ok()) _exit(11);
    if (!appendLineToFile(users, "accel: hello").ok()) _exit(12);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(slurp(roots), "");
  EXPECT_EQ(slurp(users), "accel: hello\n");
  EXPECT_FALSE(becomeJobUser(0, 0).ok()) << "a root job is not written for";
}

}  // namespace
}  // namespace accel::agentd
