#pragma once
// Runs the fake clients as child processes against a private state
// directory, the way the agent will run the real ones.
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace accel::hw_mock::test {

struct RunResult {
  int exit_code = -1;  // -1 if killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
};

struct Process {
  pid_t pid = -1;
  std::string out_path;
  std::string err_path;
};

// A temporary ACCEL_HW_MOCK_STATE directory, removed on destruction.
class FakeEnv {
 public:
  FakeEnv();
  FakeEnv(const FakeEnv&) = delete;
  FakeEnv& operator=(const FakeEnv&) = delete;

  const std::string& root() const { return root_; }
  // Writes/reads a file relative to root(), creating parent directories.
  void write(const std::string& rel, const std::string& content) const;
  std::string read(const std::string& rel) const;

  // Runs `program` to completion with ACCEL_HW_MOCK_STATE=root(). `env` adds
  // variables or overrides that one; SLURM_JOB_ID is never inherited.
  RunResult run(const std::string& program, const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env = {}) const;
  Process start(const std::string& program, const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env = {}) const;

 private:
  support::TempDir dir_{"hw_mock_test"};
  std::string root_ = dir_.path();
  mutable int counter_ = 0;
};

// Waits for the process and collects its output.
RunResult wait(const Process& p);
// True if the process is still running after `seconds`.
bool stillRunningAfter(const Process& p, double seconds);
// Reads a file's text ("" if missing).
std::string slurp(const std::string& path);
// Seconds since an arbitrary point, monotonic.
double monoSeconds();

}  // namespace accel::hw_mock::test
