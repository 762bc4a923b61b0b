#include "fake_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace accel::hw_mock::test {

namespace fs = std::filesystem;

FakeEnv::FakeEnv() { fs::create_directories(root_ + "/out"); }

void FakeEnv::write(const std::string& rel, const std::string& content) const {
  fs::path p = fs::path(root_) / rel;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
}

std::string FakeEnv::read(const std::string& rel) const { return slurp(root_ + "/" + rel); }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Process FakeEnv::start(const std::string& program, const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env) const {
  Process p;
  const std::string stem = root_ + "/out/" + std::to_string(++counter_);
  p.out_path = stem + ".out";
  p.err_path = stem + ".err";

  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv = *e;
    if (kv.starts_with("ACCEL_HW_MOCK_STATE=") || kv.starts_with("SLURM_JOB_ID=")) continue;
    env_strings.emplace_back(kv);
  }
  if (env.count("ACCEL_HW_MOCK_STATE") == 0) env_strings.push_back("ACCEL_HW_MOCK_STATE=" + root_);
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  std::vector<std::string> argv_strings{program};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, p.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, p.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int rc = posix_spawn(&p.pid, program.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + program);
  return p;
}

RunResult FakeEnv::run(const std::string& program, const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env) const {
  return wait(start(program, args, env));
}

RunResult wait(const Process& p) {
  int status = 0;
  while (::waitpid(p.pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  RunResult r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = slurp(p.out_path);
  r.err = slurp(p.err_path);
  return r;
}

bool stillRunningAfter(const Process& p, double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  // WNOWAIT leaves the child to be reaped by wait().
  siginfo_t info{};
  ::waitid(P_PID, static_cast<id_t>(p.pid), &info, WEXITED | WNOHANG | WNOWAIT);
  return info.si_pid == 0;
}

double monoSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace accel::hw_mock::test
