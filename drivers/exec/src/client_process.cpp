#include "accel/exec/client_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

extern char** environ;

namespace accel::exec {
namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

std::vector<std::string>& passedNames() {
  static std::vector<std::string> names;
  return names;
}

// The daemon's environment is root's and may hold anything a unit file or an
// operator's shell put there; a vendor client gets only what it needs.
std::map<std::string, std::string> cleanEnv() {
  std::map<std::string, std::string> vars = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, {"LC_ALL", "C"}};
  if (const char* home = std::getenv("HOME")) vars["HOME"] = home;
  for (const auto& name : passedNames())
    if (const char* v = std::getenv(name.c_str())) vars[name] = v;
  return vars;
}

std::map<std::string, std::string> wholeEnv() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    std::string s(*e);
    auto eq = s.find('=');
    if (eq != std::string::npos) vars[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return vars;
}

std::vector<std::string> mergedEnv(const ClientCall& call) {
  std::map<std::string, std::string> vars = call.inherit_environment ? wholeEnv() : cleanEnv();
  for (const auto& [k, v] : call.env) vars[k] = v;
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> cStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

Result<pid_t> spawn(const ClientCall& call, int out_w, int err_w) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w, 1);
  posix_spawn_file_actions_adddup2(&actions, err_w, 2);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  posix_spawnattr_setsigmask(&attr, &none);  // the daemon blocks signals for signalfd
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> args = call.argv;
  std::vector<std::string> env = mergedEnv(call);
  auto argv = cStrings(args);
  auto envp = cStrings(env);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return sysError("cannot run " + call.argv[0], rc);
  return pid;
}

// Reads what is available; false at end of file.
bool drain(int fd, std::string& sink, size_t cap, bool& truncated) {
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      size_t room = sink.size() < cap ? cap - sink.size() : 0;
      if (static_cast<size_t>(n) > room) truncated = true;
      sink.append(buf, std::min(room, static_cast<size_t>(n)));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN;  // EAGAIN: open but empty; other errors: treat as closed
  }
}

void killGroup(pid_t pid) { ::kill(-pid, SIGKILL); }

void reap(pid_t pid, ClientResult& r) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
}

// Waits for output and exit until the deadline. The pidfd tells us the client
// exited even when something it started still holds the pipes open.
void pump(pid_t pid, int pidfd, Fd& out, Fd& err, Clock::time_point deadline,
          const ClientCall& call, ClientResult& r) {
  bool exited = false;
  while (!exited || out.get() >= 0 || err.get() >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd fds[3] = {
        {out.get(), POLLIN, 0}, {err.get(), POLLIN, 0}, {exited ? -1 : pidfd, POLLIN, 0}};
    int n = ::poll(fds, 3, exited ? 0 : static_cast<int>(std::min<long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents && !drain(out.get(), r.out, call.max_output, r.truncated)) out.reset();
    if (fds[1].revents && !drain(err.get(), r.err, call.max_output, r.truncated)) err.reset();
    if (fds[2].revents) exited = true;
    if (exited && n == 0) break;  // the client is gone and nothing more is buffered
  }
  killGroup(pid);  // the client on timeout, or what it left running
  reap(pid, r);
  if (r.timed_out) r.term_signal = 0;
}

}  // namespace

std::string sanitizeForUsers(std::string text, const std::vector<std::string>& secrets,
                             size_t max) {
  for (const auto& secret : secrets) {
    if (secret.empty()) continue;
    for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3))
      text.replace(at, secret.size(), "***");
  }
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  if (text.size() > max) text = text.substr(0, max) + "...";
  return text;
}

std::string ClientResult::describe() const {
  std::string text = err.empty() ? out : err;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (auto nl = text.rfind('\n'); nl != std::string::npos) text = text.substr(nl + 1);
  text = sanitizeForUsers(std::move(text), secrets);
  std::string head = timed_out     ? "timed out"
                     : term_signal ? "killed by signal " + std::to_string(term_signal)
                                   : "exit " + std::to_string(exit_code);
  return text.empty() ? head : head + ": " + text;
}

void setPassedEnvironment(std::vector<std::string> names) { passedNames() = std::move(names); }

std::vector<std::string> baseEnvironment() {
  std::vector<std::string> out;
  for (const auto& [k, v] : cleanEnv()) out.push_back(k + "=" + v);
  return out;
}

Result<ClientResult> runClient(const ClientCall& call) {
  if (call.argv.empty()) return Error(ErrorCode::kInvalidArgument, "empty command");
  // Only our ends are non-blocking: a client whose stdout returned EAGAIN
  // would fail its writes.
  int out_p[2], err_p[2];
  if (::pipe2(out_p, O_CLOEXEC) < 0) return sysError("pipe", errno);
  Fd out(out_p[0]), out_w(out_p[1]);
  if (::pipe2(err_p, O_CLOEXEC) < 0) return sysError("pipe", errno);
  Fd err(err_p[0]), err_w(err_p[1]);
  ::fcntl(out.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err.get(), F_SETFL, O_NONBLOCK);
  auto start = Clock::now();
  auto pid = spawn(call, out_w.get(), err_w.get());
  if (!pid.ok()) return pid.error();
  out_w.reset();
  err_w.reset();
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, *pid, 0)));
  if (pidfd.get() < 0) {
    int e = errno;
    killGroup(*pid);
    ClientResult ignored;
    reap(*pid, ignored);
    return sysError("pidfd_open", e);
  }
  ClientResult r;
  r.secrets = call.secrets;
  pump(*pid, pidfd.get(), out, err, start + call.timeout, call, r);
  r.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  return r;
}

}  // namespace accel::exec
