#pragma once
// Runs the real accel-agentd and accelctl binaries for whole-process tests.
// The daemon gets a private config, socket and directories in a temp dir;
// its READY=1 is received on a NOTIFY_SOCKET the harness owns, exactly as
// systemd would receive it.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace accel::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Where the binaries and the topology come from.
struct HarnessPaths {
  std::string agentd;
  std::string accelctl;
  std::string topology_xml;
};

class AgentHarness {
 public:
  explicit AgentHarness(HarnessPaths paths);  // makes the temp dir and a default accel.conf
  ~AgentHarness();                            // kills the daemon if running, removes the temp dir

  const std::string& dir() const { return dir_; }
  std::string configPath() const { return dir_ + "/accel.conf"; }
  std::string socketPath() const { return dir_ + "/control.sock"; }
  std::string runDir() const { return run_dir_; }
  // Moves RunDir into a fresh directory under `parent` (e.g. a tmpfs, as /run
  // is on a systemd host); removed with the harness. Call before start().
  void placeRunDirUnder(const std::string& parent);
  void writeConfig(const std::string& extra_lines);

  // Starts the daemon; true once it said READY=1 (within `timeout`).
  // On failure `startError()` holds what it printed.
  bool start(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  const std::string& startError() const { return start_error_; }
  // Everything the daemon wrote to stderr (its log) so far, across restarts.
  std::string daemonLog() const;
  // Makes the next start() ask for watchdog pings, as WatchdogSec= does.
  void setWatchdogUsec(uint64_t usec) { watchdog_usec_ = usec; }
  void kill9();
  int terminate();  // SIGTERM, waits, returns the exit status
  void signal(int sig);
  bool running();
  pid_t pid() const { return pid_; }
  // Waits for a notify message containing `text` (e.g. "READY=1").
  bool waitNotify(const std::string& text, std::chrono::milliseconds timeout);

  // Runs accelctl with exactly `env` (plus PATH) as `uid`.
  RunResult ctl(const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env = {}, uid_t uid = 0);
  // Slurm-like prolog/epilog environment for a job.
  static std::map<std::string, std::string> jobEnv(uint32_t job_id, uid_t uid,
                                                   const std::string& gpus = "");

 private:
  HarnessPaths paths_;
  // Under /tmp whatever TMPDIR says: job users must reach run/jobs/<id>.
  support::TempDir tmp_{"accel-agentd-test", "/tmp"};
  std::string dir_ = tmp_.path();
  std::string run_dir_;
  std::optional<support::TempDir> run_parent_;  // set when RunDir lives outside dir_
  std::string extra_config_;
  pid_t pid_ = -1;
  int notify_fd_ = -1;
  std::string log_path_;
  std::string start_error_;
  uint64_t watchdog_usec_ = 0;
};

}  // namespace accel::testing
