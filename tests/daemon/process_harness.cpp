#include "process_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "accel/common/safe_file.h"

namespace accel::testing {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

AgentHarness::AgentHarness(HarnessPaths paths) : paths_(std::move(paths)) {
  run_dir_ = dir_ + "/run";
  chmod(dir_.c_str(), 0755);  // job users must reach run/jobs/<id>
  log_path_ = dir_ + "/agentd.log";
  writeConfig("");
}

void AgentHarness::placeRunDirUnder(const std::string& parent) {
  run_parent_.emplace("accel-agentd-run", parent);
  chmod(run_parent_->path().c_str(), 0755);
  run_dir_ = run_parent_->file("run");
  writeConfig(extra_config_);
}

AgentHarness::~AgentHarness() {
  if (pid_ > 0) kill9();
  if (notify_fd_ >= 0) close(notify_fd_);
}

void AgentHarness::writeConfig(const std::string& extra) {
  extra_config_ = extra;
  std::ofstream f(configPath());
  f << "# written by the test harness\n"
    << "ControlSocket=" << socketPath() << "\n"
    << "StateDir=" << dir_ << "/state\n"
    << "RunDir=" << runDir() << "\n"
    << "SlurmUser=root\n"
    << "TopologyFile=" << paths_.topology_xml << "\n"
    << "HookTimeout=5\n"
    // Job directories on RunDir's file system: the daemon here runs in the test's
    // mount namespace, where a tmpfs per job would outlive a test that never runs
    // the job's epilog. The tmpfs is tested by job_manager_test, the sandbox's
    // suites and systemd.units.
    << "JobDirSize=0\n"
    << extra;
}

bool AgentHarness::start(std::chrono::milliseconds timeout) {
  if (notify_fd_ < 0) {
    notify_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::string p = dir_ + "/notify.sock";
    std::strncpy(a.sun_path, p.c_str(), sizeof(a.sun_path) - 1);
    bind(notify_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  }
  pid_ = fork();
  if (pid_ == 0) {
    int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    dup2(log, STDERR_FILENO);
    dup2(log, STDOUT_FILENO);
    setenv("NOTIFY_SOCKET", (dir_ + "/notify.sock").c_str(), 1);
    unsetenv("JOURNAL_STREAM");
    if (watchdog_usec_ > 0) {
      // systemd names the pid that must ping; exec keeps ours.
      setenv("WATCHDOG_USEC", std::to_string(watchdog_usec_).c_str(), 1);
      setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
    }
    execl(paths_.agentd.c_str(), paths_.agentd.c_str(), "--config", configPath().c_str(), nullptr);
    _exit(127);
  }
  if (waitNotify("READY=1", timeout)) return true;
  start_error_ = slurp(log_path_);
  return false;
}

bool AgentHarness::waitNotify(const std::string& text, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{notify_fd_, POLLIN, 0};
    if (poll(&p, 1, 20) > 0) {
      char buf[4096];
      ssize_t n = recv(notify_fd_, buf, sizeof buf, 0);
      if (n > 0 && std::string(buf, static_cast<size_t>(n)).find(text) != std::string::npos)
        return true;
    }
    if (!running()) return false;
  }
  return false;
}

bool AgentHarness::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void AgentHarness::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void AgentHarness::signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

int AgentHarness::terminate() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

RunResult AgentHarness::ctl(const std::vector<std::string>& args,
                            const std::map<std::string, std::string>& env, uid_t uid) {
  std::string out_path = dir_ + "/ctl.out", err_path = dir_ + "/ctl.err";
  pid_t child = fork();
  if (child == 0) {
    int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    dup2(o, STDOUT_FILENO);
    dup2(e, STDERR_FILENO);
    clearenv();
    setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    if (uid != 0 && (setgid(uid) != 0 || setuid(uid) != 0)) _exit(126);
    std::vector<char*> argv{paths_.accelctl.data()};
    std::string config = configPath();
    argv.push_back(const_cast<char*>("--config"));
    argv.push_back(config.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(paths_.accelctl.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

std::map<std::string, std::string> AgentHarness::jobEnv(uint32_t job_id, uid_t uid,
                                                        const std::string& gpus) {
  std::map<std::string, std::string> env{{"SLURM_JOB_ID", std::to_string(job_id)},
                                         {"SLURM_JOB_UID", std::to_string(uid)},
                                         {"SLURM_JOB_GID", std::to_string(uid)},
                                         {"SLURM_JOB_USER", "user" + std::to_string(uid)},
                                         {"SLURMD_NODENAME", "node1"},
                                         {"SLURM_SCRIPT_CONTEXT", "prolog_slurmd"}};
  if (!gpus.empty()) env["SLURM_JOB_GPUS"] = gpus;
  return env;
}

std::string AgentHarness::daemonLog() const { return slurp(log_path_); }

}  // namespace accel::testing
